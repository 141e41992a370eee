"""The NAS-Bench-201 network: output shape, exact parameter count, zero cells, equivalences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nasviz.network_size import count_parameters
from nasviz.spaces.nb201.network import (
    NB201Network,
    build_nb201_network,
    expected_parameter_count,
)
from nasviz.spaces import nb201

ALL_CONV3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
MIXED = "|nor_conv_3x3~0|+|avg_pool_3x3~0|skip_connect~1|+|nor_conv_1x1~0|none~1|nor_conv_3x3~2|"
EMPTY = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


@pytest.mark.parametrize("arch", [ALL_CONV3, MIXED, EMPTY])
@pytest.mark.parametrize("C,N", [(4, 1), (8, 2)])
def test_output_shape_and_exact_parameter_count(arch, C, N):
    net = build_nb201_network(nb201.parse(arch), channels=C, n_cells=N, n_classes=10, in_channels=1)
    out = net(torch.randn(5, 1, 8, 8))
    assert out.shape == (5, 10)
    assert count_parameters(net) == expected_parameter_count(nb201.operations(nb201.parse(arch)), C, N, 10, 1)


def test_parameter_count_by_hand_for_all_conv3_c4_n1():
    # stem 9*1*4 + 8 = 44; cells: 6*(9*c*c + 2c) for c = 4, 8, 16 -> 912 + 3552 + 14016;
    # reductions 4->8: 288+16 + 576+16 + 32 = 928; 8->16: 1152+32 + 2304+32 + 128 = 3648;
    # head BN 32; classifier 16*10 + 10 = 170.
    net = build_nb201_network(nb201.parse(ALL_CONV3), channels=4, n_cells=1)
    assert count_parameters(net) == 44 + 912 + 3552 + 14016 + 928 + 3648 + 32 + 170


def test_input_resolution_and_channels_are_configurable():
    net = NB201Network(nb201.operations(nb201.parse(MIXED)), channels=4, n_cells=1, n_classes=3, in_channels=3)
    assert net(torch.randn(2, 3, 16, 16)).shape == (2, 3)


def test_cell_without_path_outputs_a_constant():
    torch.manual_seed(0)
    net = build_nb201_network(nb201.parse(EMPTY), channels=4).eval()
    out = net(torch.randn(6, 1, 8, 8))
    assert torch.allclose(out, out[0].expand_as(out))  # the input cannot influence the logits


def test_skipped_dead_edges_do_not_change_the_function():
    # Edge 0->1 feeds node 1, whose outgoing edges are none: it cannot reach the output, so the
    # network equals the one with that edge set to none (same weights).
    a = nb201.parse("|nor_conv_3x3~0|+|nor_conv_1x1~0|none~1|+|none~0|none~1|nor_conv_3x3~2|")
    b = nb201.parse("|none~0|+|nor_conv_1x1~0|none~1|+|none~0|none~1|nor_conv_3x3~2|")
    na, nb = build_nb201_network(a, channels=4), build_nb201_network(b, channels=4)
    state = {k: v for k, v in na.state_dict().items() if k in nb.state_dict()}
    nb.load_state_dict(state)
    x = torch.randn(4, 1, 8, 8)
    assert torch.allclose(na.eval()(x), nb.eval()(x), atol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="channels"):
        NB201Network(nb201.operations(nb201.parse(MIXED)), channels=0)
    with pytest.raises(ValueError, match="unknown NAS-Bench-201 operation"):
        NB201Network(("conv_5x5",) * 6)


# ----------------------------------------------------------------------------- equivalence classes
def _edge_terms(ops: tuple[str, ...]) -> list[str | None]:
    """The term each edge adds to its target (``None`` for edges that add no term of their own:
    ``none``, ``skip_connect``, and edges whose source received nothing). Written here, apart
    from nasviz.arch, so the weight tying below does not trust the code it tests."""
    nodes: list[list[str] | None] = [["x"], None, None, None]
    terms: list[str | None] = []
    for op, (src, dst) in zip(ops, nb201.CELL_EDGES):
        source = nodes[src]
        if op == "none" or source is None:
            terms.append(None)
            continue
        added = source if op == "skip_connect" else [f"{op}({'+'.join(sorted(source))})"]
        terms.append(None if op == "skip_connect" else added[0])
        nodes[dst] = (nodes[dst] or []) + added
    return terms


def _tie_weights(nets: list[NB201Network], seed: int) -> None:
    """Give every network the same stem, reductions and head, and every edge that adds the same
    term (in the same stage) the same random convolution and BatchNorm parameters and statistics."""
    gen = torch.Generator().manual_seed(seed)
    shared = {k: v for k, v in nets[0].state_dict().items() if not k.startswith("cells.") or ".conv_" in k or "shortcut" in k}
    by_term: dict[tuple[int, str], dict[str, torch.Tensor]] = {}
    for net in nets:
        net.load_state_dict({**net.state_dict(), **shared})
        for stage, module in enumerate(m for m in net.cells if hasattr(m, "edges")):
            for term, edge in zip(_edge_terms(module.ops), module.edges):
                state = edge.state_dict()
                if term is None or not state:
                    continue
                if (stage, term) not in by_term:
                    by_term[(stage, term)] = {
                        k: (torch.rand(v.shape, generator=gen, dtype=v.dtype) + 0.5 if "running_var" in k
                            else torch.randn(v.shape, generator=gen, dtype=v.dtype) if v.is_floating_point() else v)
                        for k, v in state.items()
                    }
                edge.load_state_dict(by_term[(stage, term)])


def _outputs(cells: list[str], seed: int = 0) -> list[torch.Tensor]:
    # float64: members sum the same terms in different orders, which float32 rounding would show
    nets = [build_nb201_network(nb201.parse(c), channels=4).double().eval() for c in cells]
    _tie_weights(nets, seed)
    x = torch.randn(8, 1, 8, 8, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    with torch.no_grad():
        return [net(x) for net in nets]


@pytest.mark.slow
def test_members_of_one_class_compute_the_same_function_with_tied_weights():
    rng = np.random.default_rng(0)
    classes: dict[str, list[str]] = {}
    for arch in nb201.enumerate_all():
        classes.setdefault(nb201.canonical_key(arch), []).append(nb201.format(arch))
    large = [members for members in classes.values() if len(members) > 1]
    # every class with a convolution used twice or skip paths that meet again, plus random ones
    chosen = [m for m in large if "+" in nb201.canonical_key(nb201.parse(m[0]))][:40]
    chosen += [large[i] for i in rng.choice(len(large), 40, replace=False)]
    for members in chosen:
        picked = [members[i] for i in rng.choice(len(members), min(4, len(members)), replace=False)]
        outs = _outputs(picked, seed=len(members))
        for other, out in zip(picked[1:], outs[1:]):
            assert torch.allclose(outs[0], out, atol=1e-6), (picked[0], other)


def test_identity_only_cells_of_different_classes_compute_different_functions():
    import itertools

    cells = [nb201.from_operations(ops) for ops in itertools.product(("none", "skip_connect"), repeat=6)]
    representatives: dict[str, str] = {}
    for arch in cells:
        representatives.setdefault(nb201.canonical_key(arch), nb201.format(arch))
    assert sorted(representatives) == ["0", "x", "x+x", "x+x+x", "x+x+x+x"]
    outs = _outputs(list(representatives.values()))
    for i, j in itertools.combinations(range(len(outs)), 2):
        assert not torch.allclose(outs[i], outs[j], atol=1e-4)
