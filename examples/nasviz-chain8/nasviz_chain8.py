"""An example nasviz plugin: chains of 8 layers, each one of three operations (6,561 chains).

Everything nasviz needs from a space is here, written against its public interface
(``nasviz.spaces.base.SearchSpace``); the package's ``pyproject.toml`` registers it through the
``nasviz.spaces`` entry point, so ``pip install`` is all it takes. What each part unlocks:

* the architecture as categorical parameters (``layer_1`` ... ``layer_8``): Optuna (its samplers as
  peers, and nasviz's sampler in an Optuna study), the default strategy's Hamming factor, the slot
  kernel, and gradient-guided mutation through :meth:`parameter_label`;
* the chain as a labelled DAG: the graph kernels (WL, edit, path) and the graph views;
* :meth:`operation_groups` (convolutions are alike, pooling is not): the tree-Wasserstein kernel,
  hence the default strategy ``bo-tw2g-hamming-ei``;
* ``lead_metrics``: which column of a table is the metric a search uses when none is named;
* ``size`` and :meth:`enumerate`: the exact argmax over the space, ``tabulate``.

``python -m nasviz_chain8 table OUT.csv`` writes a small *synthetic* benchmark table for it (a made-up
formula plus noise, for trying the plugin out; not a measurement of any network).
"""

from __future__ import annotations

import itertools
import sys
from typing import Iterator, Mapping

import numpy as np

from nasviz.arch import INPUT, OUTPUT, Architecture
from nasviz.spaces.base import LABELLED_DAG, OPERATION_TREE, PARAMETERS, PATHS, SearchSpace, check_parameters

OPERATIONS = ("conv3x3", "conv5x5", "maxpool")
LAYERS = tuple(f"layer_{i}" for i in range(1, 9))


class Chain8Space(SearchSpace):
    """Chains ``input -> layer_1 -> ... -> layer_8 -> output``, written ``conv3x3-maxpool-...``."""

    name = "chain8"
    description = "chains of 8 layers, each conv3x3, conv5x5 or maxpool (an example plugin, 6,561 chains)"
    representations = frozenset({PARAMETERS, LABELLED_DAG, OPERATION_TREE, PATHS})
    lead_metrics = ("valid_accuracy",)
    examples = ("-".join(["conv3x3"] * 8),)

    # -- the architecture as parameters: what Optuna, the Hamming kernel and mutation read
    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        return {layer: OPERATIONS for layer in LAYERS}

    def to_parameters(self, arch: Architecture) -> dict[str, str]:
        return dict(zip(LAYERS, arch.labels[1:-1]))

    def from_parameters(self, params: Mapping[str, str]) -> Architecture:
        check_parameters(params, self.parameter_choices())
        labels = (INPUT, *(params[layer] for layer in LAYERS), OUTPUT)
        return Architecture(labels, tuple((i, i + 1) for i in range(len(labels) - 1)))

    def parameter_label(self, name: str, choice: str) -> str | None:
        return choice  # a layer's operation is its node's label (its WL feature)

    # -- strings
    def parse(self, text: str) -> Architecture:
        ops = str(text).strip().split("-")
        if len(ops) != len(LAYERS):
            raise ValueError(f"a chain has {len(LAYERS)} operations joined by '-', got {len(ops)}")
        return self.from_parameters(dict(zip(LAYERS, ops)))

    def format(self, arch: Architecture) -> str:
        return "-".join(arch.labels[1:-1])

    # -- search moves
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        return [self.from_parameters(dict(zip(LAYERS, rng.choice(OPERATIONS, len(LAYERS))))) for _ in range(n)]

    def neighbours(self, arch: Architecture) -> list[Architecture]:
        params = self.to_parameters(arch)
        return [self.from_parameters({**params, layer: op}) for layer in LAYERS for op in OPERATIONS
                if op != params[layer]]

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        options = self.neighbours(arch)
        return options[int(rng.integers(len(options)))]

    def canonical_key(self, arch: Architecture) -> str:
        return self.format(arch)

    # -- a finite space
    @property
    def size(self) -> int:
        return len(OPERATIONS) ** len(LAYERS)

    def enumerate(self) -> Iterator[Architecture]:
        return (self.from_parameters(dict(zip(LAYERS, ops))) for ops in itertools.product(OPERATIONS, repeat=len(LAYERS)))

    # -- which operations are alike: the tree-Wasserstein kernel's operation tree
    def operation_groups(self) -> dict[str, tuple[str, ...]]:
        return {"conv": ("conv3x3", "conv5x5"), "pool": ("maxpool",), "input": (INPUT,), "output": (OUTPUT,)}


def write_synthetic_table(path: str, seed: int = 0) -> int:
    """Write a synthetic table of every chain (see the module docstring); returns the rows written.

    Columns: the chain, ``valid_accuracy`` and ``test_accuracy`` (a made-up accuracy: convolutions
    help more the later they stand, a 5x5 after a pooling helps, noise of s.d. 0.3 and 0.5), and
    ``latency_ms`` (minimised: the table says so in its ``# nasviz:`` schema line).
    """
    space, rng = Chain8Space(), np.random.default_rng(seed)
    cost = {"conv3x3": 1.0, "conv5x5": 2.4, "maxpool": 0.3}
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('# nasviz: metrics = { valid_accuracy = "maximise", test_accuracy = "maximise", '
                     'latency_ms = "minimise" }\n')
        handle.write("arch,valid_accuracy,test_accuracy,latency_ms\n")
        for arch in space.enumerate():
            ops = arch.labels[1:-1]
            score = 60 + sum((i + 1) * (0.8 if op == "conv3x3" else 1.0 if op == "conv5x5" else -0.5)
                             for i, op in enumerate(ops))
            score += 1.5 * sum(a == "maxpool" and b == "conv5x5" for a, b in zip(ops, ops[1:]))
            valid, test = score + rng.normal(0, 0.3), score + rng.normal(0, 0.5)
            latency = sum(cost[op] for op in ops) + rng.normal(0, 0.05)
            handle.write(f"{space.format(arch)},{valid:.3f},{test:.3f},{latency:.3f}\n")
    return space.size


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "table":
        sys.exit("usage: python -m nasviz_chain8 table OUT.csv")
    print(f"wrote {write_synthetic_table(sys.argv[2])} chains to {sys.argv[2]}")
