"""Architecture graphs (issue 46): every edge's arc and every node label lies inside the drawn
area, and the operation colours are colour-blind safe (no red beside green)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz.spaces import get_space, nb201
from nasviz.viz import plot_architecture
from nasviz.viz._common import OKABE_ITO
from nasviz.viz._graph import OP_COLOURS


def _inside(fig) -> bool:
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    edges = fig.data[0]
    xs = np.array([v for v in edges.x if v is not None], dtype=float)
    ys = np.array([v for v in edges.y if v is not None], dtype=float)
    nodes = fig.data[1]
    return (xs.min() >= xr[0] and xs.max() <= xr[1] and ys.min() >= yr[0] and ys.max() <= yr[1]
            and min(nodes.y) > yr[0] and max(nodes.y) < yr[1])


@pytest.mark.slow
def test_every_arc_lies_inside_the_drawing():
    archs = list(nb201.sample(np.random.default_rng(3), 40))
    layers = get_space("layers")
    # a chain with a long skip edge: drawn in one row, its arc bows above it
    archs.append(layers.parse("input;relu:64<0;relu:64<1;relu:64<2;linear<3,0;output<4"))
    for arch in archs:
        assert _inside(plot_architecture(arch, "t")), arch


def test_operation_colours_are_okabe_ito():
    safe = set(OKABE_ITO.values())
    for op in ("skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"):
        assert OP_COLOURS[op] in safe
    assert "#d62728" not in OP_COLOURS.values() and "#2ca02c" not in OP_COLOURS.values()


def test_a_long_architecture_title_wraps_instead_of_being_clipped():
    # Seen on the Architectures page: "A: |nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_conn"
    # ran off the figure's right edge, the rest of the cell and its value cut away.
    from nasviz.viz._common import TITLE_LINE_CHARS, clear_of_toolbar, wrap_title

    text = "A: |nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
    title = text + "  →  cifar10 94.37"
    fig = plot_architecture(nb201.parse(text[3:]), title)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 2 and all(len(line) <= TITLE_LINE_CHARS for line in lines), lines
    assert "".join(lines) == title  # nothing lost, the breaks fall at the string's own separators
    assert all(line.endswith(("+", "|", " ")) for line in lines[:-1]), lines
    one_line = plot_architecture(nb201.parse(text[3:]), "A")
    assert fig.layout.height > one_line.layout.height  # the drawing keeps its height under more lines
    assert clear_of_toolbar(fig).layout.margin.t > clear_of_toolbar(one_line).layout.margin.t
    assert wrap_title("x" * 100, 40).split("<br>") == ["x" * 40, "x" * 40, "x" * 20]  # no separator: cut
    assert wrap_title("short") == "short"
