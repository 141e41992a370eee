"""A visitor that speaks Streamlit's own websocket protocol, for load benchmarks without a browser.

:class:`StreamVisitor` opens ``ws://HOST/_stcore/stream`` (subprotocol ``streamlit``) as the
Streamlit frontend does and sends ``BackMsg.rerun_script`` with a ``ClientState`` naming the page
(``page_name``: the page's URL path, ``""`` for the default page, as the frontend sends for an
address it loads) and its query string, plus any widget values (``widget_states``; a button's
click is its ``trigger_value``). The server answers with ``ForwardMsg`` protobufs: ``new_session``
(the page's script hash), ``delta`` (each element the script draws), ``auto_rerun`` /
``stop_auto_rerun`` (a fragment's ``run_every`` timer, which the frontend runs: so does this
client, re-running the fragment as ``is_auto_rerun``, so a page that polls, and the jobs whose
heartbeat that poll is, behave as in a tab) and ``script_finished``.

A page's **latency** here is the seconds from sending the ``rerun_script`` request to the first
``script_finished`` of a whole-page run (``FINISHED_SUCCESSFULLY``; not a fragment's run, not a run
ended early for a rerun the script asked for) after which the page's content has arrived in the
deltas -- the script's runs it triggers itself (``st.rerun``) included. It excludes the websocket's
opening and everything the browser does with the deltas (layout, drawing, figures' JavaScript),
which ``bench classroom --client browser`` measures. Nothing here imports Streamlit's server; only
its generated protobuf modules.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: The root containers of an element's ``delta_path`` (``ForwardMsg.metadata.delta_path[0]``).
MAIN, SIDEBAR = 0, 1

#: Streamlit's id of a widget given a ``key``: ``$$ID-<hash>-<key>``.
_ID_PREFIX = "$$ID-"


@dataclass
class PageRun:
    """What one request drew: the elements of its whole-page runs, in order, and its timing."""

    page: str
    query: str
    elements: list[Element] = field(default_factory=list)
    containers: list[int] = field(default_factory=list)  # each element's root container: MAIN or SIDEBAR
    seconds: float | None = None  # None: the page's content never came within the timeout
    runs: int = 0  # whole-page runs finished (more than one when the script reran itself)

    def kinds(self) -> list[str]:
        """Each element's type (``"button"``, ``"plotly_chart"``, ``"heading"``, ...)."""
        return [e.WhichOneof("type") or "" for e in self.elements]

    def widget(self, key: str) -> tuple[str, str] | None:
        """``(type, id)`` of the widget the script gave ``key``, or ``None`` if it drew none."""
        for e in self.elements:
            kind = e.WhichOneof("type")
            inner = getattr(e, kind) if kind else None
            wid = getattr(inner, "id", "") if inner is not None else ""
            if isinstance(wid, str) and wid.startswith(_ID_PREFIX) and wid.split("-", 2)[-1] == key:
                return kind, wid
        return None

    def texts(self, kinds: Iterable[str] = ("markdown", "heading", "alert", "progress", "text"),
              container: int | None = MAIN) -> list[str]:
        """The texts of the elements of ``kinds`` (a markdown's body, an alert's, a progress bar's
        label) in ``container`` (``None``: the sidebar's too)."""
        out = []
        for e, root in zip(self.elements, self.containers):
            kind = e.WhichOneof("type")
            if kind in kinds and (container is None or root == container):
                inner = getattr(e, kind)
                out.append(getattr(inner, "body", "") or getattr(inner, "text", ""))
        return out


def widget_value(widget_id: str, value: Any, *, trigger: bool = False) -> WidgetState:
    """A widget's value as the frontend sends it: a click (``trigger``), a bool, an int, a float
    or a string, by the Python type of ``value``."""
    state = WidgetState(id=widget_id)
    if trigger:
        state.trigger_value = True
    elif isinstance(value, bool):
        state.bool_value = value
    elif isinstance(value, int):
        state.int_value = value
    elif isinstance(value, float):
        state.double_value = value
    else:
        state.string_value = str(value)
    return state


class StreamVisitor:
    """One browser session over the websocket, without a browser: ``async with StreamVisitor(url)``."""

    def __init__(self, url: str):
        self.url = url.rstrip("/").replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        self._ws = None
        self._reader: asyncio.Task | None = None
        self._timers: dict[str, asyncio.Task] = {}
        self._page_hash = ""
        self._query = ""
        self._run: PageRun | None = None
        self._finished: asyncio.Queue[int] = asyncio.Queue()
        self.closed_reason: str | None = None

    async def __aenter__(self) -> "StreamVisitor":
        from websockets.asyncio.client import connect

        self._ws = await connect(f"{self.url}/_stcore/stream", subprotocols=["streamlit"], max_size=None,
                                 open_timeout=120, ping_interval=None)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        for task in self._timers.values():
            task.cancel()
        self._timers.clear()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def open(self, page: str = "", query: str = "", widgets: Iterable[WidgetState] = (),
                   done: Callable[[PageRun], bool] = lambda run: True, timeout_s: float = 120.0) -> PageRun:
        """Ask for a whole-page run of ``page`` (its URL path; ``""`` the default page) with
        ``query`` and ``widgets``; return once a whole-page run has finished and ``done`` holds for
        the elements drawn since the request (``seconds`` stays ``None`` if that never happens
        within ``timeout_s``). The previous page's fragment timers stop, as a tab's do on leaving it."""
        for task in self._timers.values():
            task.cancel()
        self._timers.clear()
        while not self._finished.empty():
            self._finished.get_nowait()
        run = self._run = PageRun(page, query)
        if self._reader is None or self._reader.done():  # the connection is gone: nothing will come
            return run
        self._query = query
        start = time.perf_counter()
        await self._send(page_name=page, page_hash="", widgets=widgets)
        deadline = start + timeout_s
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return run
            try:
                status = await asyncio.wait_for(self._finished.get(), left)
            except asyncio.TimeoutError:
                return run
            if status < 0:  # the connection closed
                return run
            if status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR):
                run.runs += 1
                if done(run):
                    run.seconds = time.perf_counter() - start
                    return run

    async def _send(self, *, page_name: str = "", page_hash: str = "", widgets: Iterable[WidgetState] = (),
                    fragment: str = "") -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self._query
        state.page_name = page_name
        state.page_script_hash = page_hash
        state.widget_states.widgets.extend(widgets)
        if fragment:
            state.fragment_id = fragment
            state.is_auto_rerun = True
        await self._ws.send(msg.SerializeToString())

    async def _auto_rerun(self, fragment: str, interval: float) -> None:
        """A fragment's ``run_every`` timer, as the frontend keeps it."""
        try:
            while True:
                await asyncio.sleep(interval)
                await self._send(page_hash=self._page_hash, fragment=fragment)
        except Exception:  # the connection closed: the reader reports it (closed_reason)
            return

    async def _read(self) -> None:
        try:
            async for data in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    self._page_hash = msg.new_session.page_script_hash
                elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element" and self._run is not None:
                    self._run.elements.append(msg.delta.new_element)
                    path = msg.metadata.delta_path
                    self._run.containers.append(int(path[0]) if path else MAIN)
                elif kind == "auto_rerun":
                    fid = msg.auto_rerun.fragment_id
                    if fid in self._timers:
                        self._timers[fid].cancel()
                    self._timers[fid] = asyncio.create_task(self._auto_rerun(fid, float(msg.auto_rerun.interval)))
                elif kind == "stop_auto_rerun":
                    for fid in msg.stop_auto_rerun.fragment_ids:
                        task = self._timers.pop(fid, None)
                        if task is not None:
                            task.cancel()
                elif kind == "script_finished":
                    self._finished.put_nowait(int(msg.script_finished))
        except Exception as err:  # the server closed the connection, or a frame it sent was not a ForwardMsg
            self.closed_reason = f"{type(err).__name__}: {str(err)[:200]}"
        finally:
            self._finished.put_nowait(-1)
