"""Text from outside the code, on a page: never Markdown, never HTML, never a wall of text.

Streamlit renders Markdown in ``st.markdown``, ``st.caption``, ``st.subheader``, the alert boxes
(``st.error`` / ``info`` / ``warning`` / ``success``), ``st.toast`` and the labels of widgets and
expanders, with its own extensions: ``:red[...]`` colours, ``$...$`` LaTeX, ``:material/...:``
icons, links and images. Plotly draws its own pseudo-HTML in figure texts: ``<a href>`` links and
``<span style>``. A run's name (built from a table's metric header), a metric or column name, a
visitor's note, an architecture string, a lesson file, a query parameter or an error message that
quotes any of them is *outside text*: whoever wrote it may be another visitor.

Outside text reaches a page through this module only:

* :func:`plain` — one value as Markdown that shows exactly its characters (every ASCII punctuation
  character backslash-escaped, as CommonMark allows, which also defeats Streamlit's directives,
  LaTeX and autolinks; line breaks as spaces), cut to ``limit`` characters;
* :func:`fill` — a template written in the code (trusted Markdown) with outside values in its
  ``{}`` fields, each passed through :func:`plain`;
* :func:`chart` — ``st.plotly_chart`` after :func:`safe_figure`, which neutralises every tag in the
  figure's strings except Plotly's plain typography (``<br>``, ``<b>``, ``<i>``, ``<em>``, ``<sup>``,
  ``<sub>``, and hover templates' ``<extra>``): no link, no style from a metric's name.

``tests/dashboard/test_text.py`` checks the functions; ``tests/browser/test_hostile_text.py``
renders every page with hostile strings in every outside field.
"""

from __future__ import annotations

import re
import string
from typing import Any

#: Longest outside value shown in one place (an error quoting a 100 KB query parameter shows its
#: first characters and its length).
MAX_SHOWN = 600

_ESCAPED = frozenset(string.punctuation)
_WHITESPACE = re.compile(r"\s+")


def shorten(value: Any, limit: int = MAX_SHOWN) -> str:
    """``str(value)`` on one line (runs of white space as one space), cut to ``limit`` characters
    with ``… (N characters)`` saying how long it was."""
    text = _WHITESPACE.sub(" ", str(value)).strip()
    if len(text) > limit:
        return f"{text[:limit]}… ({len(text):,} characters)"
    return text


#: An invisible character that joins the characters beside it: put into ``://``, ``www.`` and before
#: ``@``, it keeps the GFM autolink extension, which Streamlit runs on the text *after* Markdown is
#: parsed (so escaping cannot stop it), from turning a URL or an address in outside text into a link.
WORD_JOINER = "\u2060"
_AUTOLINK_STARTS = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)", re.IGNORECASE)


def plain(value: Any, limit: int = MAX_SHOWN) -> str:
    """``value`` as Markdown that renders as exactly its (shortened) characters, URLs and addresses
    unlinked (a :data:`WORD_JOINER` inside ``://``, ``www.`` and before ``@``)."""
    text = _AUTOLINK_STARTS.sub(WORD_JOINER, shorten(value, limit))
    return "".join("\\" + ch if ch in _ESCAPED else ch for ch in text)


def fill(template: str, *values: Any, limit: int = MAX_SHOWN, **named: Any) -> str:
    """``template.format(...)`` with every value passed through :func:`plain`: the template is
    the code's Markdown, the values are outside text (``fill("**Run {}**: {}", 3, run_name)``)."""
    return template.format(*(plain(v, limit) for v in values), **{k: plain(v, limit) for k, v in named.items()})


# ----------------------------------------------------------------------------- figures

#: Plotly's typography tags that outside text may keep (they cannot link, load or restyle).
_KEPT_TAGS = re.compile(r"<(?=/?(?:br|b|i|em|sup|sub|extra)\s*/?>)", re.IGNORECASE)
_TAG = re.compile(r"<")


def plot_text(text: str) -> str:
    """One figure string with every ``<`` that does not open a kept tag written as ``&lt;``
    (Plotly shows the entity as ``<``): ``<a href=...>`` and ``<span style=...>`` become text."""
    if "<" not in text:
        return text
    kept = {m.start() for m in _KEPT_TAGS.finditer(text)}
    return "".join("&lt;" if ch == "<" and i not in kept else ch for i, ch in enumerate(text))


def _walk(node: Any) -> Any:
    import numpy as np

    if isinstance(node, np.ndarray):  # to_plotly_json keeps arrays: strings in them (custom data) too
        return _walk(node.tolist()) if node.dtype.kind in "OUS" else node
    if isinstance(node, str):
        return plot_text(node)
    if isinstance(node, dict):
        return {k: _walk(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        if node and isinstance(node[0], (int, float)) and not isinstance(node[0], bool):
            return node  # numbers: nothing to neutralise (most of a figure's size)
        return [_walk(v) for v in node]
    return node


def safe_figure(fig: Any) -> dict[str, Any]:
    """The figure's JSON with :func:`plot_text` applied to every string in it (titles, axis titles,
    legend names, tick labels, hover texts and templates, custom data)."""
    return _walk(fig.to_plotly_json())


def chart(container: Any, fig: Any, **kwargs: Any) -> Any:
    """``container.plotly_chart`` (``st`` or a column) of :func:`safe_figure`; every figure a page
    shows goes through here."""
    import plotly.graph_objects as go

    from nasviz.viz import clear_of_toolbar

    # A Figure again (plotly_chart refuses a dict without traces: an empty figure's message). A
    # Figure's spec is not validated a second time: it was validated when made and only its strings
    # were escaped, and validation was most of a live page's time (each viewer of a running search
    # redraws its figures every second).
    shown = go.Figure(safe_figure(fig), _validate=not isinstance(fig, go.Figure))
    return container.plotly_chart(clear_of_toolbar(shown), **kwargs)


# ----------------------------------------------------------------------------- configurations

#: Fields of a stored search configuration that hold a path of the server.
PATH_FIELDS = ("table", "data_folder")


def public_config(config: dict[str, Any]) -> dict[str, Any]:
    """A run's configuration as a visitor may see it: server paths (the table, an uploaded file's
    folder, the data folder) by their file name only."""
    from pathlib import PurePath

    shown = dict(config)
    for name in PATH_FIELDS:
        if isinstance(shown.get(name), str) and shown[name]:
            shown[name] = PurePath(shown[name]).name
    return shown


__all__ = ["MAX_SHOWN", "PATH_FIELDS", "chart", "fill", "plain", "plot_text", "public_config", "safe_figure", "shorten"]
