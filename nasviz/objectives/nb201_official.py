"""Convert the official NAS-Bench-201 benchmark file into the project's plain CSV table.

The official file (e.g. ``NAS-Bench-201-v1_1-096897.pth``, several GB) is a *torch pickle*. The
operator converts it once on the command line (``python -m nasviz table import-nb201 PATH --out
CSV``); the dashboard never reads it (nor any pickle): it reads the CSV, as text, with
:func:`~nasviz.objectives.table.load_table`.

Even here the file is not trusted: :func:`load_official` loads it with torch's restricted
unpickler (``weights_only=True``) admitting, beyond tensors and plain containers, only the classes
listed in :data:`ALLOWED` (numpy scalars and dtypes, ``OrderedDict``, ``set``). A file that names
anything else is refused with an error naming that class, and nothing from it runs.

How the file is read
--------------------
The file is a dict with ``meta_archs`` (architecture strings, by index), ``arch2infos`` (per
index ``{"less": ..., "full": ...}``: state dicts of the package's ``ArchResults`` for the
12-epoch and the 200-epoch training schedules) and ``evaluated_indexes``. We rebuild each
architecture's ``ArchResults`` with the ``nas-bench-201`` package's own
``ArchResults.create_from_state_dict`` and read accuracies with its ``get_metrics`` (which
averages over the training seeds), exactly as ``NASBench201API.query_by_index`` does.

Deviations from the package's own loader, and why:

* ``NASBench201API(path)`` calls ``torch.load`` without ``weights_only``; torch >= 2.6 then
  defaults to ``weights_only=True``, which refuses the official file (it holds numpy objects),
  while older torch unpickles everything silently. We load with ``weights_only=True`` and
  allow-list exactly the numpy objects (and containers) the file holds (:data:`ALLOWED`).
* ``NASBench201API(dict)`` deep-copies the whole dict (memory doubles: ~10 GB for v1.1). We
  skip that copy and convert one architecture at a time; a ``NASBench201API`` instance is
  still accepted as input (see :func:`import_official`).

Columns written
---------------
``arch`` (the official string, normalised by :mod:`nasviz.spaces.nb201`), then test accuracies
(``cifar10`` = CIFAR-10 trained on train+valid, tested on the test set, as in the paper's
tables; ``cifar100`` and ``ImageNet16-120`` on their ``x-test`` split), then validation
accuracies (``cifar10-valid`` = CIFAR-10 trained on train only, on ``x-valid``;
``cifar100-valid``, ``ImageNet16-120-valid``), then training times ``<dataset>_seconds``
(total training seconds for the chosen schedule, mean over seeds). Accuracies are in percent.
A column is written only if every architecture has it; dropped columns are reported with a
:class:`UserWarning`. The table loader uses the first ``*_seconds`` column as the evaluation
cost.
"""

from __future__ import annotations

import csv
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from nasviz.spaces import nb201

#: Datasets of NAS-Bench-201, in the order their columns are written.
DATASETS = ("cifar10", "cifar100", "ImageNet16-120", "cifar10-valid")

#: Per dataset: (column, the package's set name) for the test and the validation accuracy.
_TEST_COLUMN = {"cifar10": ("cifar10", "ori-test"), "cifar100": ("cifar100", "x-test"),
                "ImageNet16-120": ("ImageNet16-120", "x-test")}
_VALID_COLUMN = {"cifar10-valid": ("cifar10-valid", "x-valid"), "cifar100": ("cifar100-valid", "x-valid"),
                 "ImageNet16-120": ("ImageNet16-120-valid", "x-valid")}

#: Training schedule -> the key of ``arch2infos`` entries (as in ``NASBench201API.__init__``).
_SCHEDULE = {12: "less", 200: "full"}

_REQUIRED_KEYS = ("meta_archs", "arch2infos", "evaluated_indexes")


def _allowed() -> tuple[tuple[object, str], ...]:
    """What the official file may name besides torch's defaults, each under every name it is
    pickled as: the file was written with numpy 1 (``numpy.core``), files re-saved with numpy 2
    say ``numpy._core``. Scalars (``np.float64(80.0)``) need ``scalar`` and their dtype."""
    import collections

    import numpy as np
    from numpy._core import multiarray

    allowed: list[tuple[object, str]] = []
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed += [(multiarray.scalar, f"{module}.scalar"), (multiarray._reconstruct, f"{module}._reconstruct")]
    allowed += [(np.dtype, "numpy.dtype"), (np.ndarray, "numpy.ndarray"),
                (collections.OrderedDict, "collections.OrderedDict"), (set, "builtins.set"),
                (set, "__builtin__.set")]
    for kind in ("float64", "float32", "int64", "int32", "bool"):
        dtype_class = type(np.dtype(kind))
        allowed.append((dtype_class, f"numpy.dtypes.{dtype_class.__name__}"))
    return tuple(allowed)


#: ``(object, pickled name)`` of everything the official file may name beyond torch's defaults.
ALLOWED: tuple[tuple[object, str], ...] = _allowed()


def load_official(path: str | os.PathLike) -> dict:
    """Load the official benchmark file at ``path`` with the restricted unpickler (see the module
    docstring): only tensors, plain containers and :data:`ALLOWED` are admitted.

    Raises
    ------
    UnsafeFileError
        The file names a class outside the allow-list (named in the message; nothing was run).
    ValueError
        A missing file, a folder or FIFO, a file that is not a torch file, or one that is not a
        NAS-Bench-201 benchmark dict (all :class:`~nasviz.errors.InputError`).
    """
    from nasviz.objectives.restricted_load import restricted_torch_load

    data = restricted_torch_load(path, ALLOWED, what="a NAS-Bench-201 file")
    _check_benchmark(data, str(path))
    return data


def _check_benchmark(data: Any, label: str) -> None:
    if not isinstance(data, Mapping):
        raise ValueError(f"{label} is not a NAS-Bench-201 benchmark: expected a dict, got {type(data).__name__}")
    missing = [k for k in _REQUIRED_KEYS if k not in data]
    if missing:
        raise ValueError(f"{label} is not a NAS-Bench-201 benchmark: no {', '.join(repr(k) for k in missing)} "
                         f"(expected keys {', '.join(_REQUIRED_KEYS)})")


def official_rows(source: Any, *, epochs: int = 200, datasets: Sequence[str] = DATASETS,
                  label: str = "benchmark") -> tuple[list[str], list[list[Any]], list[str]]:
    """The table of a loaded benchmark: ``(header, rows, notes)``.

    Parameters
    ----------
    source : dict or NASBench201API
        The unpickled file (see :func:`load_official`) or an API object built from it.
    epochs : {12, 200}
        Which training schedule to read.
    datasets : sequence of str
        Subset of :data:`DATASETS`.

    Returns
    -------
    header : list of str, length 1 + c
    rows : list of lists, one per evaluated architecture (ascending index): the architecture
        string then ``c`` floats
    notes : list of str
        Columns dropped because some architectures lack them.
    """
    if epochs not in _SCHEDULE:
        raise ValueError(f"epochs must be 12 or 200 (the two NAS-Bench-201 schedules), got {epochs}")
    datasets = list(datasets)
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown or not datasets:
        raise ValueError(f"unknown dataset(s) {unknown or datasets}; choose from {', '.join(DATASETS)}")
    meta_archs, indexes, results = _results_reader(source, epochs, label)
    columns: list[tuple[str, str, str]] = []  # (column, dataset, set name or "seconds")
    # a fixed order whatever the order asked: tests, then validations, then times
    columns += [(c, d, setname) for d, (c, setname) in _TEST_COLUMN.items() if d in datasets]
    columns += [(c, d, setname) for d, (c, setname) in _VALID_COLUMN.items() if d in datasets]
    columns += [(f"{d}_seconds", d, "seconds") for d in DATASETS if d in datasets]

    archs: list[str] = []
    values: dict[str, list[float | None]] = {c: [] for c, _, _ in columns}
    for i in indexes:
        if not 0 <= i < len(meta_archs):
            raise ValueError(f"{label}: evaluated index {i} is outside meta_archs (length {len(meta_archs)})")
        try:
            archs.append(nb201.format(nb201.parse(meta_archs[i])))
        except ValueError as err:
            raise ValueError(f"{label}: architecture {i} {meta_archs[i]!r} is not a NAS-Bench-201 cell: {err}") from None
        res = results(i)
        available = set(res.get_dataset_names())
        for column, dataset, setname in columns:
            values[column].append(_read(res, dataset, setname) if dataset in available else None)

    kept, notes = _complete_columns(columns, values, len(archs), epochs)
    if not [c for c in kept if not c.endswith("_seconds")]:
        raise ValueError(f"{label} has no accuracy for datasets {', '.join(datasets)} with {epochs} epochs "
                         f"({'; '.join(notes) or 'no evaluated architectures'})")
    header = ["arch", *kept]
    rows = [[a, *(values[c][r] for c in kept)] for r, a in enumerate(archs)]
    return header, rows, notes


def _results_reader(source: Any, epochs: int, label: str) -> tuple[Sequence[str], list[int], Callable[[int], Any]]:
    """``(meta_archs, evaluated indexes, results)`` of a benchmark: ``results(i)`` is architecture
    ``i``'s ``ArchResults`` for the ``epochs`` schedule, read from an API object's or built from the
    unpickled file's state (with an error naming what the file lacks)."""
    from nas_201_api.api_utils import ArchResults

    hp = str(epochs)
    if hasattr(source, "arch2infos_dict"):  # a NASBench201API: its ArchResults are built already
        return source.meta_archs, list(source.evaluated_indexes), lambda i: source.arch2infos_dict[i][hp]
    _check_benchmark(source, label)
    infos, key = source["arch2infos"], _SCHEDULE[epochs]

    def results(i: int) -> Any:
        if i not in infos:
            raise ValueError(f"{label}: evaluated architecture {i} has no entry in arch2infos")
        if key not in infos[i]:
            raise ValueError(f"{label}: architecture {i} has no {epochs}-epoch results ('{key}')")
        return ArchResults.create_from_state_dict(infos[i][key])

    return source["meta_archs"], sorted(source["evaluated_indexes"]), results


def _complete_columns(columns: Sequence[tuple[str, str, str]], values: dict[str, list[float | None]],
                      n_archs: int, epochs: int) -> tuple[list[str], list[str]]:
    """The columns every architecture has, and a note for each column dropped (a time column that
    no architecture has is dropped without one)."""
    notes, kept = [], []
    for column, _, _ in columns:
        n_missing = sum(v is None for v in values[column])
        if n_missing == 0 and n_archs:
            kept.append(column)
        elif not column.endswith("_seconds") or n_missing < n_archs:
            notes.append(f"column {column!r} dropped: {n_missing} of {n_archs} architectures lack it "
                         f"for the {epochs}-epoch schedule")
    return kept, notes


def _read(res: Any, dataset: str, setname: str) -> float | None:
    """One number from an ``ArchResults`` (mean over seeds), or None if the file lacks it."""
    try:
        if setname == "seconds":
            value = res.get_compute_costs(dataset).get("T-train@total")
        else:
            value = res.get_metrics(dataset, setname)["accuracy"]
    except (KeyError, ValueError, TypeError, AssertionError):
        return None
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def import_official(path: str | os.PathLike | Mapping | Any, out_csv: str | os.PathLike, epochs: int = 200,
                    datasets: Iterable[str] = DATASETS) -> int:
    """Convert the official NAS-Bench-201 file into a CSV table; return the number of rows.

    ``path`` is the official file, loaded with the restricted unpickler of
    :func:`load_official`; a dict already loaded from it or a ``NASBench201API`` object is
    accepted too. The CSV (columns described in the module
    docstring) is written atomically: a failed import leaves no partial file. Columns that some
    architectures lack are dropped with a ``UserWarning``.
    """
    if isinstance(path, (str, os.PathLike)):
        source, label = load_official(path), str(path)
    else:
        source, label = path, "benchmark"
    header, rows, notes = official_rows(source, epochs=epochs, datasets=list(datasets), label=label)
    if notes:
        warnings.warn(f"{label}: " + "; ".join(notes), UserWarning, stacklevel=2)
    out = Path(out_csv)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".part", dir=out.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            for row in rows:
                writer.writerow([row[0], *(repr(v) for v in row[1:])])
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(rows)
