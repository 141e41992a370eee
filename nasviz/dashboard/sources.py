"""Where evaluations come from: a benchmark table (embedded, uploaded, or a CSV in the operator's
data folder) or live training on a bundled dataset that fits the space.

What a browser may read is bounded here (:class:`~nasviz.settings.ServeSettings`): server-side
tables come only from the operator's data folder (:func:`server_table`), uploads are capped and
kept under unguessable names (:func:`save_upload`, :mod:`nasviz.uploads`), and nothing is ever
unpickled: every table is read as text by :func:`~nasviz.objectives.load_table`.

>>> source = DataSource.from_table(path, table_from_path(path))      # the embedded table
>>> source = DataSource.training("wine", space="layers")              # live training
>>> training_datasets("nb201")                                       # ['digits']: image input only
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from nasviz import uploads
from nasviz.dashboard.locations import default_store_path, runs_dir, uploads_dir
from nasviz.errors import InputError
from nasviz.objectives import Table, TableError, load_table
from nasviz.objectives import default_table_path as objectives_default_table
from nasviz.server_paths import resolve_server_folder, resolve_server_path
from nasviz.settings import Limits, ServeSettings
from nasviz.store import RUNNING, RunStore
from nasviz.spaces.strings import parse_architecture
from nasviz.defaults import DEFAULT_SPACE

TABLE = "table"
TRAIN = "train"


def default_table_path() -> Path | None:
    """The embedded default table (NAS-Bench-201 CIFAR), else the shared NB201 table, else ``None``
    (:func:`nasviz.objectives.default_table_path`)."""
    return objectives_default_table()


# ----------------------------------------------------------------------------- table caching


class _TableCache:
    """Loaded tables by ``(resolved path, mtime, size, space)``: a table is parsed once until its
    file changes, and an upload parsed from its bytes is put here under its stored path.

    Tables are shared between browser sessions; nothing the pages do modifies one.
    """

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._tables: "OrderedDict[tuple, Table]" = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(path: Path, space: str) -> tuple:
        info = path.stat()
        return (str(path), info.st_mtime_ns, info.st_size, space)

    def get(self, key: tuple) -> Table | None:
        with self._lock:
            if key in self._tables:
                self._tables.move_to_end(key)
            return self._tables.get(key)

    def put(self, key: tuple, table: Table) -> None:
        with self._lock:
            self._tables[key] = table
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)


_TABLES = _TableCache()


def table_from_path(path: str | os.PathLike, space: str = DEFAULT_SPACE, *, max_bytes: int | None = None) -> Table:
    """Load a table CSV that the app itself chose (the embedded table, a stored upload, a run's
    table), cached until the file changes. Visitors' paths go through :func:`server_table`.

    Raises :class:`~nasviz.objectives.TableError` (a ``ValueError``) naming the problem.
    """
    if not str(path).strip():
        raise TableError("no table path given")
    p = Path(path).expanduser().resolve()
    if p.suffix.lower() not in (".csv", ".txt"):
        raise TableError("expected a CSV file (.csv)", source=p.name)
    try:
        key = _TABLES.key(p, space)
    except FileNotFoundError:
        raise TableError("file does not exist", source=str(path)) from None
    except OSError as err:
        raise TableError(f"cannot be read: {err.strerror or err}", source=str(path)) from None
    table = _TABLES.get(key)
    if table is None:
        table = load_table(p, space=space, max_bytes=max_bytes)
        _TABLES.put(key, table)
    return table


def server_table(text: str, space: str = DEFAULT_SPACE, settings: ServeSettings | None = None) -> tuple[Path, Table]:
    """A table from a path a visitor typed: only inside the operator's data folder.

    The path is resolved (symlinks, ``..``) and refused unless it lies in
    ``settings.data_dir`` (server-side paths are off when that is ``None``) and outside the run
    folder; the file may be at most ``limits.max_table_mb``. Errors never quote the file: the
    visitor may not read it (:meth:`~nasviz.errors.InputError.redacted`).
    """
    settings = settings or ServeSettings.from_env()
    path = resolve_server_path(text, settings.data_dir, forbidden=[runs_dir()])
    try:
        return path, table_from_path(path, space, max_bytes=settings.limits.max_table_bytes)
    except InputError as err:
        raise type(err)(err.redacted()) from None


def save_upload(data: bytes, filename: str, space: str = DEFAULT_SPACE, folder: Path | None = None,
                limits: Limits | None = None, owner: str | None = None) -> tuple[Path, Table]:
    """Validate an uploaded CSV and keep a copy the background worker can read.

    The bytes are parsed as UTF-8 text by :func:`~nasviz.objectives.load_table` (never
    unpickled), once per content (:func:`nasviz.uploads.parse_upload`). Bad rows are reported in
    ``table.bad_rows`` with their line numbers; a file with no usable row raises ``TableError``,
    one over ``limits.max_upload_mb`` a ``LimitError``. The copy gets a new unguessable name
    (:func:`nasviz.uploads.store_upload`, counted against ``owner``'s, the browser session's, share);
    old uploads no running search reads are pruned. A new upload is first read in a child process
    with a time limit (:func:`nasviz.uploads.check_parse_time`).
    """
    limits = limits or ServeSettings.from_env().limits
    uploads.check_upload(data, filename, limits)
    if not uploads.is_cached(data, filename, space):
        uploads.check_parse_time(data, filename, space, limits)
    table = uploads.parse_upload(data, filename, space)
    folder = folder or uploads_dir()
    in_use = uploads_in_use(default_store_path(), limits.upload_max_age_hours * 3600)
    path = uploads.store_upload(data, folder, limits, in_use=in_use, owner=owner)
    _TABLES.put(_TABLES.key(path.resolve(), space), table)  # the worker and the pages find it parsed
    return path, table


def uploads_in_use(store_path: str | os.PathLike, recent_seconds: float = 0.0) -> set[Path]:
    """Tables of the store's runs that are running or were updated in the last
    ``recent_seconds``: an upload's age counts from its last use by a search, so these are kept."""
    if not Path(store_path).is_file():
        return set()
    since = time.time() - recent_seconds
    return {Path(r.table).resolve() for r in RunStore(store_path).list_runs()
            if r.table and (r.status == RUNNING or r.updated >= since)}


# ----------------------------------------------------------------------------- live training


def trainer_available() -> bool:
    """Whether live training (``nasviz.objectives.trainer``, needs torch) is part of this installation."""
    return importlib.util.find_spec("nasviz.objectives.trainer") is not None


def training_datasets(space: str = DEFAULT_SPACE) -> list[str]:
    """Bundled datasets (:data:`nasviz.components.DATASETS`) whose input the space's networks
    accept (:meth:`~nasviz.spaces.base.SearchSpace.trainable_on`), in registry order; empty
    when the trainer is absent."""
    from nasviz.components import DATASETS
    from nasviz.spaces import get_space

    if not trainer_available():
        return []
    accepts = get_space(space).trainable_on()
    return DATASETS.names(lambda e: e.capabilities.get("input") in accepts)


def is_folder_dataset(dataset: str) -> bool:
    """Whether ``dataset`` is read from a folder the operator keeps (MNIST, Fashion-MNIST,
    CIFAR-10 in torchvision's layout) rather than bundled."""
    from nasviz.components import DATASETS

    return bool(DATASETS.get(dataset).capabilities.get("folder"))


def dataset_folder(text: str, settings: ServeSettings | None = None) -> Path:
    """The folder of a folder dataset from a path a visitor typed: resolved, and refused unless it
    is a folder inside the operator's data folder and outside the run folder
    (:func:`~nasviz.server_paths.resolve_server_folder`). The search stores the resolved path."""
    settings = settings or ServeSettings.from_env()
    return resolve_server_folder(text, settings.data_dir, forbidden=[runs_dir()])


def training_metrics(dataset: str) -> list[str]:
    """What training on ``dataset`` measures: accuracies for classification, R^2 scores for regression."""
    from nasviz.components import DATASETS

    if DATASETS.get(dataset).capabilities.get("task") == "regression":
        return ["valid_score", "test_score"]
    return ["valid_accuracy", "test_accuracy"]


# ----------------------------------------------------------------------------- the source


#: Bad rows a data source keeps as text (it lives in every visitor's session; the sidebar shows them).
SHOWN_BAD_ROWS = 200

@dataclass
class DataSource:
    """Where evaluations come from: a table CSV (``path``) or live training (``dataset``), for
    architectures of ``space``."""

    kind: str  # TABLE or TRAIN
    label: str
    path: str | None = None
    dataset: str | None = None
    #: the resolved folder of a folder dataset (:func:`dataset_folder`), else ``None``
    data_folder: str | None = None
    metrics: list[str] = field(default_factory=list)
    optimum: dict[str, float] = field(default_factory=dict)
    rows: int = 0
    #: rows of the file that repeated an architecture and were averaged into it (NAS-Bench-101's
    #: repeated trainings): the file has ``rows + rows_averaged`` usable rows
    rows_averaged: int = 0
    #: the first :data:`SHOWN_BAD_ROWS` bad rows as text (all are counted in ``n_bad_rows``)
    bad_rows: list[str] = field(default_factory=list)
    n_bad_rows: int = 0
    #: Whether messages about the table may quote it (``False`` for a server file: the visitor
    #: may use it but not read it).
    disclose: bool = True
    space: str = DEFAULT_SPACE

    @classmethod
    def from_table(cls, path: Path, table: Table, label: str | None = None, *, disclose: bool = True) -> "DataSource":
        """The source of a loaded table. ``disclose=False`` (a server file: not the visitor's
        own) keeps the bad rows as line, column number and reason, without the cells' text."""
        return cls(TABLE, label or table.source, path=str(path), metrics=table.metrics,
                   optimum={m: table.optimum(m) for m in table.metrics}, rows=len(table),
                   rows_averaged=int(table.repeats.sum() - len(table)),
                   bad_rows=[str(b) if disclose else b.redacted() for b in table.bad_rows[:SHOWN_BAD_ROWS]],
                   n_bad_rows=table.n_bad_rows, disclose=disclose,
                   space=table.space.name)

    @classmethod
    def training(cls, dataset: str, space: str = DEFAULT_SPACE, data_folder: str | Path | None = None) -> "DataSource":
        """Live training of every proposed architecture on ``dataset`` (bundled, or read from
        ``data_folder`` for a folder dataset)."""
        return cls(TRAIN, f"live training on {dataset}", dataset=dataset, metrics=training_metrics(dataset),
                   space=space, data_folder=None if data_folder is None else str(data_folder))

    def table(self) -> Table:
        """The source's table (cached; :func:`table_from_path`). If it cannot be read any more
        (the file changed), the error quotes nothing from it unless :attr:`disclose`."""
        if self.kind != TABLE or not self.path:
            raise TableError(f"{self.label} is not a table")
        try:
            return table_from_path(self.path, self.space)
        except InputError as err:
            if self.disclose:
                raise
            raise type(err)(err.redacted()) from None

    def summary(self) -> str:
        """One line for the sidebar: the label, how many architectures, and how many repeated
        rows were averaged into them (a table of 500 rows may hold 292 architectures)."""
        if not self.rows:
            return self.label
        text = f"{self.label}: {self.rows:,} architecture{'s' if self.rows != 1 else ''}"
        if self.rows_averaged:
            text += (f" ({self.rows + self.rows_averaged:,} rows: {self.rows_averaged:,} repeated an architecture "
                     "and were averaged into it)")
        return text

    def skipped_rows(self, first: int = 5) -> dict:
        """``{"count", "first"}``: the table's bad rows as the run stores and shows them (already
        redacted for a server file)."""
        return {"count": self.bad_row_count, "first": self.bad_rows[:first]}

    @property
    def bad_row_count(self) -> int:
        """Every bad row of the table (``bad_rows`` holds the first few; a source built without a
        table's count has only those)."""
        return max(self.n_bad_rows, len(self.bad_rows))


def current_table(source: DataSource | None) -> Table | None:
    """The table behind the sidebar's data source (``None`` for live training or no source)."""
    if source is None or source.kind != TABLE or not source.path:
        return None
    return source.table()


def lookup_value(source: DataSource | None, arch: str, metric: str | None) -> float | None:
    """The table's value of ``arch`` for ``metric`` (``None`` if not a table or not in it)."""
    if source is None or source.kind != TABLE or not metric:
        return None
    try:
        table = source.table()
        return table.lookup(parse_architecture(table.space, arch), metric)
    except (KeyError, ValueError):
        return None
