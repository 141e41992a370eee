"""Streamlit plumbing every page shares: running through ``app.py``, the browser session's token
and kernels, the operator's settings, and stopping a page with a message instead of a traceback.

With :mod:`nasviz.dashboard.forms`, :mod:`nasviz.dashboard.sidebar` and
:mod:`nasviz.dashboard.sidebyside` this is where nasviz imports Streamlit (besides the pages);
the engine, :mod:`nasviz.viz` and the rest of :mod:`nasviz.dashboard` never do.
"""

from __future__ import annotations

import math
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

import streamlit as st

from nasviz.dashboard.kernels import KernelSet
from nasviz.dashboard.locations import default_store_path
from nasviz.defaults import DEFAULT_SPACE
from nasviz.errors import InputError
from nasviz.settings import ServeSettings
from nasviz.store import RunStore, StoreError

if TYPE_CHECKING:
    from nasviz.dashboard.sources import DataSource
    from nasviz.objectives import Table


def run_through_app() -> None:
    """Make sure a page runs inside ``app.py``'s navigation, with its sidebar.

    Streamlit treats a folder named ``pages/`` as its older multipage layout until ``app.py`` first
    calls ``st.navigation``: a browser whose first request after a server start goes straight to
    ``/runs`` would run that page file alone, without the shared sidebar. Call this first thing in
    every page: it switches the old mode off and reruns through ``app.py``.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def literal(text: str) -> str:
    """``text`` for a widget label, caption or message, where Streamlit renders Markdown: exactly
    its characters (:func:`nasviz.dashboard.text.plain`; NAS-Bench-201's ``~`` would otherwise
    strike the text through), up to 2,000 of them (a lesson's paragraph)."""
    from nasviz.dashboard.text import plain

    return plain(text, limit=2000)


def stop_with(message: str, kind: str = "error") -> NoReturn:
    """Show ``message`` (``st.error`` or ``st.info``) and end the page's run here."""
    from nasviz.dashboard.text import plain

    (st.info if kind == "info" else st.error)(plain(message, limit=2000))  # messages quote tables, errors, parameters
    st.stop()


def store_path() -> os.PathLike:
    """The run store this server uses (``$NASVIZ_STORE``)."""
    return default_store_path()


def runs_or_stop(path: os.PathLike, empty_message: str) -> tuple[RunStore, list[StoredRun]]:
    """``(store, runs)`` from the run store; on an unreadable store or no runs, say so and stop."""
    try:
        store = RunStore(path)
        runs = store.list_runs()
    except StoreError as err:
        stop_with(f"Cannot open the run store {Path(path).name}: {err}")
    if not runs:
        stop_with(empty_message, "info")
    return store, runs


def source() -> "DataSource | None":
    """The sidebar's data source (``None`` with the reason in ``source_error``)."""
    return st.session_state.get("source")


def current_space() -> str:
    """The search space chosen in the sidebar."""
    return str(st.session_state.get("space") or DEFAULT_SPACE)


def current_table_or_stop(src: "DataSource | None") -> "Table | None":
    """The table of the sidebar's data source (``None`` if it has none); an unreadable one stops the page."""
    from nasviz.dashboard.sources import current_table

    try:
        return current_table(src)
    except (InputError, ValueError, OSError) as err:
        stop_with(f"Cannot read the table: {err}")


def resume_and_rerun(path: os.PathLike, run_id: int) -> None:
    """Resume a run in the background and rerun the page; show the reason if it cannot resume
    (a running-search limit included)."""
    from nasviz.dashboard import launching

    try:
        launching.resume_run(path, run_id, session=session_token(), limits=serve_settings().limits)
    except (ValueError, StoreError) as err:
        st.error(str(err))
    else:
        st.rerun()


def session_token() -> str:
    """A random id of this browser session (kept in its session state), stored with the runs it
    starts so the per-session limit on running searches can count them. A reload is a new
    session; the limit on all running searches holds across sessions."""
    return st.session_state.setdefault("_nasviz_session", secrets.token_hex(16))


def session_kernels() -> KernelSet:
    """This browser session's kernels (never shared with another session's, see
    :mod:`nasviz.dashboard.kernels`)."""
    return st.session_state.setdefault("_nasviz_kernels", KernelSet())


def serve_settings() -> ServeSettings:
    """The operator's :class:`~nasviz.settings.ServeSettings`; a bad ``NASVIZ_*`` value stops
    the page with a message naming it."""
    try:
        return ServeSettings.from_env()
    except InputError as err:
        stop_with(f"The server is misconfigured: {err}")


# ------------------------------------------------------------------------------ state in the URL
def adopt_from_url(param: str, key: str, allowed: Sequence[str] | None = None, convert=str) -> None:
    """Before the widget with session key ``key`` is drawn: take its value from the URL's
    ``param`` once per browser session, the first time the page sees it (a shared or typed
    link opens a new session).

    Only once: after that the widget leads and :func:`publish_to_url` writes it to the URL. A
    browser can send its address before it has applied the server's last change to it, and
    adopting that stale value would undo the visitor's click (a tab switched back during a
    live refresh). Values not in ``allowed`` (when given) are ignored, so a link cannot select
    something the widget would refuse.
    """
    seen: dict[str, str] = st.session_state.setdefault("_url_seen", {})
    wanted = st.query_params.get(param)
    if wanted is None or param in seen:
        return
    seen[param] = wanted
    if allowed is not None and wanted not in allowed:
        return
    try:
        st.session_state[key] = convert(wanted)
    except (TypeError, ValueError):
        return


def publish_to_url(param: str, value: Any) -> None:
    """Write a widget's value to the URL (``None`` removes it), so the view can be shared."""
    seen: dict[str, str] = st.session_state.setdefault("_url_seen", {})
    if value is None:
        st.query_params.pop(param, None)
        seen.pop(param, None)
        return
    text = str(value)
    seen[param] = text
    if st.query_params.get(param) != text:
        st.query_params[param] = text


#: The largest id or count a link may name: SQLite's integers are 64-bit signed.
MAX_URL_INT = 2**63 - 1
#: Characters a number in a link may have (a longer one is refused before it is converted).
MAX_URL_NUMBER_CHARS = 24


def url_int(text: Any) -> int:
    """A whole number from a link: ASCII digits only (``str.isdigit`` also accepts ``²``, which
    ``int`` refuses), at most :data:`MAX_URL_NUMBER_CHARS` of them and at most :data:`MAX_URL_INT`
    (SQLite's bound); ``ValueError`` otherwise."""
    text = str(text).strip()
    if not text or len(text) > MAX_URL_NUMBER_CHARS or not (text.isascii() and text.isdigit()):
        raise ValueError("not a whole number")
    value = int(text)
    if value > MAX_URL_INT:
        raise ValueError("too large")
    return value


def url_float(text: Any) -> float:
    """A finite number from a link (``nan`` and ``inf`` are refused)."""
    text = str(text).strip()
    if len(text) > MAX_URL_NUMBER_CHARS:
        raise ValueError("too long")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not finite")
    return value


def _bounded(convert: Callable[[str], Any], low: Any = None, high: Any = None) -> Callable[[str], Any]:
    """``convert`` that raises ``ValueError`` outside ``[low, high]`` (a widget refuses such a value)."""
    def parse(text: str) -> Any:
        value = convert(text)
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"{value} is outside [{low}, {high}]")
        return value
    return parse


def url_number(container: Any, label: str, *, key: str, param: str, min_value: int | float,
               max_value: int | float | None = None, **kwargs: Any) -> Any:
    """``container.number_input`` (integer if ``min_value`` is an int) kept in the URL's ``param``;
    a value outside the input's bounds is ignored."""
    convert = url_int if isinstance(min_value, int) and not isinstance(min_value, bool) and min_value >= 0 else (
        int if isinstance(min_value, int) and not isinstance(min_value, bool) else url_float)
    adopt_from_url(param, key, convert=_bounded(convert, min_value, max_value))
    if key in st.session_state:
        kwargs.pop("value", None)  # the session value leads; a default beside it would warn
    value = container.number_input(label, min_value=min_value, max_value=max_value, key=key, **kwargs)
    publish_to_url(param, value)
    return value


def url_multiselect(container: Any, label: str, options: Sequence[Any], *, key: str, param: str,
                    convert: Callable[[str], Any] = str, **kwargs: Any) -> list:
    """``container.multiselect`` kept in the URL's ``param`` as a comma-separated list; items the
    box does not offer are dropped (a link to a deleted run still opens)."""
    seen: dict[str, str] = st.session_state.setdefault("_url_seen", {})
    wanted = st.query_params.get(param)
    if wanted is not None and param not in seen:
        seen[param] = wanted
        chosen = []
        for item in str(wanted).split(","):
            try:
                value = convert(item.strip())
            except (TypeError, ValueError):
                continue
            if value in options and value not in chosen:
                chosen.append(value)
        if chosen:
            st.session_state[key] = chosen
            kwargs.pop("default", None)  # the session value leads; a default beside it would warn
    values = container.multiselect(label, options, key=key, **kwargs)
    publish_to_url(param, ",".join(str(v) for v in values) if values else None)
    return values


def url_selectbox(container: Any, label: str, options: Sequence[Any], *, key: str, param: str,
                  convert: Callable[[str], Any] = str, **kwargs: Any) -> Any:
    """``container.selectbox`` whose choice is kept in the URL's ``param`` (a shared link opens
    with the same choice; a value the box does not offer is ignored). ``convert`` turns the URL's
    text into an option (``int`` for run ids)."""
    adopt_from_url(param, key, allowed=[str(o) for o in options], convert=convert)
    value = container.selectbox(label, options, key=key, **kwargs)
    publish_to_url(param, value)
    return value
