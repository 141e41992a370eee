"""Whether a strategy, its options, a space and a batch size can run together (see
:mod:`nasviz.components`): worked out from declared capabilities only, without importing a
kernel or a strategy; and the one parse and check of a search's strategy options
(:func:`checked_options`)."""

from __future__ import annotations

import importlib.util
from typing import Any, Mapping

from nasviz.components.registries import BATCH_SELECTORS, KERNELS, POOLS, SPACES, STRATEGIES
from nasviz import defaults
from nasviz.errors import ConfigError

def package_available(name: str) -> bool:
    """True if the (optional) package ``name`` can be imported; nothing is imported."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a module set to None
        return False


_DAG, _TREE = "labelled-dag", "operation-tree"
#: What each built-in kernel class reads (its ``reads``), written here so that offering the kernels
#: and strategies that fit a space imports no kernel module: scipy's spatial and optimize packages
#: and GraKeL came with them, about half a second of a new server's first page.
#: ``tests/test_components.py`` checks every entry against its class.
_BUILT_IN_READS: dict[str, frozenset[str]] = {
    "nasviz.kernels.tw:TreeWassersteinKernel": frozenset({_DAG, _TREE}),
    "nasviz.kernels.slots:SlotKernel": frozenset({"categorical-parameters"}),
    "nasviz.kernels.slots:TWSlotsKernel": frozenset({"categorical-parameters", _DAG, _TREE}),
    "nasviz.kernels.wl:WLKernel": frozenset({_DAG}),
    "nasviz.kernels.otmann:OTMANNKernel": frozenset({_DAG, "layers"}),
    "nasviz.kernels.edit:EditDistanceKernel": frozenset({_DAG}),
    "nasviz.kernels.path:PathEncodingKernel": frozenset({_DAG, "paths"}),
    "nasviz.kernels.ot:OTKernel": frozenset({_DAG, _TREE}),
    "nasviz.kernels.ot:GWKernel": frozenset({_DAG}),
    "nasviz.kernels.graph_kernels:RandomWalkKernel": frozenset({_DAG}),
    "nasviz.kernels.graph_kernels:ShortestPathKernel": frozenset({_DAG}),
    "nasviz.kernels.graph_kernels:MultiscaleLaplacianKernel": frozenset({_DAG}),
    "nasviz.kernels.additive:AdditiveWLMLGKernel": frozenset({_DAG}),
}


def kernel_reads(kernel: str) -> frozenset[str]:
    """The representations kernel ``kernel``'s class declares it reads: from the entry's
    ``capabilities["reads"]`` or the built-in table above without importing the class, else
    (a plugin's kernel that declares nothing) from the class itself."""
    entry = KERNELS.get(kernel)
    declared = entry.capabilities.get("reads")
    if declared is None and entry.built_in and isinstance(entry.factory, str):
        declared = _BUILT_IN_READS.get(entry.factory)
    return frozenset(declared) if declared is not None else frozenset(entry.load().reads)


def space_provides(space: str) -> frozenset[str]:
    return SPACES.get(space).load().provided_representations()


def kernel_fits(kernel: str, space: str) -> bool:
    return kernel_reads(kernel) <= space_provides(space)


def kernels_for(space: str) -> list[str]:
    """The kernels that can read ``space``, in registry order."""
    return [k for k in KERNELS.names() if kernel_fits(k, space)]


def strategy_kernel(strategy: str, options: Mapping[str, Any] | None = None) -> str | None:
    """The kernel a strategy's GP uses (``None`` for strategies without a model)."""
    entry = STRATEGIES.get(strategy)
    if not entry.capabilities.get("model"):
        return None
    fixed = entry.capabilities.get("kernel")
    return str(fixed) if fixed else str({**entry.preset, **(options or {})}.get("kernel", defaults.DEFAULT_KERNEL))


def problems(space: str, strategy: str, options: Mapping[str, Any] | None = None, batch_size: int = 1) -> list[str]:
    """Every reason ``strategy`` with ``options`` cannot search ``space`` with batches of
    ``batch_size`` (empty when it can); each names what does not fit."""
    options = dict(options or {})
    entry = STRATEGIES.get(strategy)
    SPACES.get(space)
    found: list[str] = []
    allowed = entry.capabilities.get("spaces")
    if allowed and space not in allowed:
        found.append(f"strategy {strategy!r} searches only the {', '.join(allowed)} space(s), not {space!r}")
    needs = sorted(set(entry.capabilities.get("needs", ())) - space_provides(space))
    if needs:
        found.append(f"strategy {strategy!r} needs the {', '.join(needs)} representation, which {space!r} lacks")
    requires = entry.capabilities.get("requires")
    if requires and not package_available(requires[0]):
        found.append(f"strategy {strategy!r} needs the optional package {requires[0]}: pip install \"{requires[1]}\"")
    kernel = strategy_kernel(strategy, options)
    if kernel is not None and not kernel_fits(kernel, space):
        missing = sorted(kernel_reads(kernel) - space_provides(space))
        found.append(f"kernel {kernel!r} cannot read the {space!r} space: it needs {', '.join(missing)}")
    config = {**entry.preset, **options}
    pool = config.get("pool") or entry.capabilities.get("pool")
    if pool:
        needs = POOLS.get(str(pool)).capabilities.get("needs", frozenset())
        missing = sorted(set(needs) - space_provides(space))
        if missing:
            found.append(f"candidate pool {pool!r} needs the {', '.join(missing)} representation, which {space!r} lacks")
    selector = config.get("batch")
    if entry.option("batch") is not None and selector:
        least = int(BATCH_SELECTORS.get(str(selector)).capabilities.get("min_batch", 1))
        if batch_size < least:
            found.append(f"batch selector {selector!r} chooses a diverse set: it needs a batch size of at least "
                         f"{least}, got {batch_size}")
    return found


class IncompatibleError(ConfigError):
    """A strategy, its options, a space and a batch size that cannot run together (the message
    lists :func:`problems`): the page names it at once and keeps Start disabled, where other
    faults (a budget of 0) are named when Start is pressed."""


def check_compatible(space: str, strategy: str, options: Mapping[str, Any] | None = None, batch_size: int = 1) -> None:
    """Raise :class:`IncompatibleError` (a :class:`~nasviz.errors.ConfigError`) listing
    :func:`problems`, if any."""
    found = problems(space, strategy, options, batch_size)
    if found:
        raise IncompatibleError("; ".join(found))


def checked_options(space: str, strategy: str, options: Mapping[str, Any] | None = None,
                    batch_size: int | None = None) -> dict[str, Any]:
    """``strategy``'s ``options`` parsed (typed, ``None`` dropped) and checked with ``space`` and
    batches of ``batch_size`` (default: the ``batch_size`` option, else what the strategy was
    designed for): the one parse and the one compatibility check of a search's strategy.

    :meth:`nasviz.config.SearchConfig.create` calls it once; the runner builds the strategy from
    the result without calling it again (:func:`nasviz.strategies.factory.build_strategy`), and
    :func:`~nasviz.strategies.factory.make_strategy` calls it for raw options. Raises
    :class:`~nasviz.errors.ConfigError` for an unknown or ill-typed option, :class:`IncompatibleError`
    for a combination that cannot run.
    """
    parsed = STRATEGIES.get(strategy).parse_options(dict(options or {}), owner=f"strategy {strategy!r}")
    batch = batch_size if batch_size is not None else int(parsed.get("batch_size", default_batch_size(strategy)))
    check_compatible(space, strategy, parsed, batch)
    return parsed


def default_batch_size(strategy: str) -> int:
    """The batch a strategy was designed for (5 for ``bo-tw2g-kdpp5``), else 1."""
    return int(STRATEGIES.get(strategy).preset.get("batch_size", 1))
