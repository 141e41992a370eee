"""Outside text on a page (issue 47): Markdown that shows exactly its characters, figure texts without
links or styles, short errors, links' numbers within range, server paths by name only."""

from __future__ import annotations

import string
import time

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from nasviz.dashboard.text import (MAX_SHOWN, WORD_JOINER, fill, plain, plot_text, public_config, safe_figure,
                                   shorten)
from nasviz.dashboard.ui import MAX_URL_INT, url_float, url_int
from nasviz.errors import ArchitectureError
from nasviz.spaces import get_space
from nasviz.spaces.strings import MAX_ARCH_CHARS, parse_architecture

HOSTILE = ("![x](http://127.0.0.1:9/beacon.png) [Session expired: sign in again](http://127.0.0.1:9/phish) "
           "<img src=x onerror=alert(1)> **bold** ~~strike~~ $x^2$ :red[red] `code` # heading\n- item\n1. one")


def _unescaped_punctuation(markdown: str) -> list[int]:
    """Positions of ASCII punctuation not escaped by a backslash (CommonMark: a backslash before any
    ASCII punctuation character makes it literal)."""
    bad, k = [], 0
    while k < len(markdown):
        if markdown[k] == "\\" and k + 1 < len(markdown) and markdown[k + 1] in string.punctuation:
            k += 2
            continue
        if markdown[k] in string.punctuation:
            bad.append(k)
        k += 1
    return bad


@given(st_.text(max_size=400))
@settings(max_examples=120, deadline=None)
def test_plain_escapes_every_punctuation_character_and_keeps_one_line(text):
    out = plain(text)
    assert _unescaped_punctuation(out) == [] and "\n" not in out and "\r" not in out


def test_plain_of_a_hostile_header_reads_back_as_its_characters():
    out = plain(HOSTILE).replace(WORD_JOINER, "")  # invisible: it only keeps URLs from becoming links
    unescaped = "".join(ch for k, ch in enumerate(out) if not (ch == "\\" and k + 1 < len(out)
                                                             and out[k + 1] in string.punctuation))
    assert unescaped == " ".join(HOSTILE.split())  # line breaks become spaces, nothing else changes
    assert "](" not in out.replace("\\]\\(", "")  # no link or image syntax survives


def test_fill_escapes_the_values_and_keeps_the_template():
    assert fill("**Run {}**: {}", 3, "[x](http://e)") == f"**Run 3**: \\[x\\]\\(http\\:{WORD_JOINER}\\/\\/e\\)"
    assert fill("{name}!", name="a_b") == "a\\_b!"


def test_urls_and_addresses_in_outside_text_are_not_linked():
    """Streamlit links bare URLs after parsing Markdown, so escaping alone leaves them links."""
    out = plain("see http://e.com, www.e.org and a@e.com").replace("\\", "")
    assert "http://" not in out and "www." not in out and "a@" not in out
    assert out.replace(WORD_JOINER, "") == "see http://e.com, www.e.org and a@e.com"


def test_long_values_are_cut_and_say_how_long_they_were():
    text = "1" * 100_000
    assert shorten(text) == "1" * MAX_SHOWN + "… (100,000 characters)"
    assert len(plain(text)) < MAX_SHOWN + 40


def test_figure_texts_lose_links_and_styles_but_keep_line_breaks_and_hover_extras():
    assert plot_text('<a href="http://e">x</a>') == '&lt;a href="http://e">x&lt;/a>'
    assert plot_text('<span style="font-size:80px">y</span>') == '&lt;span style="font-size:80px">y&lt;/span>'
    assert plot_text("a<br>b <b>c</b> %{y}<extra></extra>") == "a<br>b <b>c</b> %{y}<extra></extra>"
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name='<a href="http://e">n</a>',
                               customdata=[['<a href="h">q</a>'], ["ok"]]))
    fig.update_layout(title='metric <a href="http://e">here</a>', xaxis_title="<img src=x>")
    data = safe_figure(fig)
    assert "<a " not in str(data) and "<img" not in str(data)
    go.Figure(data)  # still a valid figure


def test_a_runs_configuration_names_its_table_by_file_name_only():
    shown = public_config({"table": "/srv/nasviz/uploads/abc123.csv", "data_folder": "/srv/data/mnist", "seed": 1})
    assert shown == {"table": "abc123.csv", "data_folder": "mnist", "seed": 1}


@pytest.mark.parametrize("text", ["²", "١٢", "-1", "1.5", "", " ", "99999999999999999999", "9" * 5000, "0x10", "1e3"])
def test_a_links_run_id_is_ascii_digits_within_sqlites_range(text):
    with pytest.raises(ValueError):
        url_int(text)


def test_a_links_numbers_that_are_fine():
    assert url_int("12") == 12 and url_int(str(MAX_URL_INT)) == MAX_URL_INT and url_float("0.5") == 0.5
    for bad in ("nan", "inf", "-inf", "1e999"):
        with pytest.raises(ValueError):
            url_float(bad)


def test_a_wired_string_with_an_overflowing_number_is_an_architecture_error():
    with pytest.raises(ArchitectureError, match="not a valid wired architecture"):
        parse_architecture(get_space("wired"), "er:P=0.1,seed=1e999|0-1")
    example = get_space("wired").examples[0]  # 'ws:K=4,...': K=1e999 read as inf would be written back as 'inf'
    with pytest.raises(ArchitectureError, match="not a finite number"):
        parse_architecture(get_space("wired"), example.replace("K=4", "K=1e999"))
    with pytest.raises(ArchitectureError) as caught:  # a parser's own message quoting 400 digits is cut
        parse_architecture(get_space("layers"), "input;relu:" + "9" * 400 + "<0;output<1")
    assert len(str(caught.value)) < 600


def test_a_huge_architecture_string_is_refused_at_once_with_a_short_message():
    start = time.perf_counter()
    with pytest.raises(ArchitectureError) as caught:
        parse_architecture(get_space("layers"), "x" * 10_000_000)
    assert time.perf_counter() - start < 1.0  # refused by length, never parsed
    assert len(str(caught.value)) < 200 and f"{MAX_ARCH_CHARS:,}" in str(caught.value)
    with pytest.raises(ArchitectureError) as caught:
        parse_architecture(get_space("nb201"), "|" + "a" * 9_000)  # under the cap: the parser's reason, cut
    assert len(str(caught.value)) < 400


def test_every_shown_figure_has_its_title_below_the_chart_toolbar():
    """Issue 46: at 390 px the chart toolbar spans the width and covered centred titles (the Kernels
    page's component panels, which did not pin theirs). ``chart`` pins every figure's title."""
    import numpy as np

    from nasviz import viz
    from nasviz.dashboard.text import chart
    from nasviz.viz._common import TOOLBAR_ROOM

    class Sink:
        def plotly_chart(self, fig, **kwargs):
            self.fig = fig

    panels = viz.plot_distance_panels({"operations": np.ones((4, 4)) - np.eye(4)}, list("abcd"), [1.0, 2.0, 3.0, 4.0])
    sink = Sink()
    for _, fig in panels:
        assert fig.layout.title.yref != "container"  # as the figure comes: centred, at the very top
        chart(sink, fig)
        title = sink.fig.layout.title
        assert title.yref == "container" and title.y == 1.0 and title.pad.t >= TOOLBAR_ROOM
        assert sink.fig.layout.margin.t >= TOOLBAR_ROOM + 45
    untitled = viz.empty_figure("nothing yet")
    chart(sink, untitled)
    assert not sink.fig.layout.title.text and sink.fig.layout.margin.t == untitled.layout.margin.t
