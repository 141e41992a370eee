"""What a search benchmark runs on: table/metric pairs, named protocols and strategy specs.

A *protocol* is a list of :class:`TablePair` (a benchmark table, one of its metrics and the space
of its architectures). The defaults of the BO strategies are tuned on a whole protocol at once,
with one setting for every pair, and checked leave-one-table-out (:mod:`nasviz.bench.tuning`),
so that no single table decides them (issue 21). Named protocols read the shared tables through
:func:`nasviz.objectives.table.shared_data_path`; the tables themselves never enter the
repository.

==============  ===================================================================================
``shared``      the six shared NAS-Bench-201 metrics: test accuracy after 200 epochs on CIFAR-10
                and CIFAR-100 (``nb201_test_accuracy.csv``), and the four metrics of the 12-epoch
                table (``nb201_12epoch.csv``: CIFAR-10 / CIFAR-100, validation / test), a different
                training length and therefore a different landscape
``nb201-200``   the two 200-epoch metrics
``nb201-12``    the four 12-epoch metrics
``nb101``       the two NAS-Bench-101 tables: the 20,001 cells of ``nb101_hash_20k.csv`` (108-epoch
                validation accuracy; the space finds each cell by its module hash) and the 292
                cells of ``nb101_500.csv``
``all``         every shared table: ``shared``, ``nb101`` and the DARTS cells of ``darts_725.csv``
                (NAS-Bench-301's surrogate validation accuracy), the nine pairs issue 21's goal is
                measured on
``fidelity``    the tables with fidelities, each with its ladder (issue 50): NAS-Bench-101 20k (4,
                12, 36, 108 epochs, ``auto``), NAS-Bench-201 CIFAR-10 and CIFAR-100 (the 12-epoch
                table's test accuracy below the 200-epoch one) and the embedded digits table (1
                epoch below the 3-epoch mean, its ``valid_accuracy``)
==============  ===================================================================================

Other tables are given as pairs with their space, ``--tables
<data>/nb101_20k.csv:valid_accuracy_108@nb101,nb101_500.csv:valid_accuracy@nb101``. Issue 21's
tuning read the two NAS-Bench-101 tables beside ``shared``, the first of them as the file ``table
import-nb101`` writes from ``nb101_hash_20k.csv``, which holds the same cells and values
(docs/benchmarks.md).

A strategy spec is a registered strategy name, optionally followed by options:
``bo-tw2g-ucb:pool=exhaustive:schedule=srinivas`` (``:``-separated ``key=value``; the registry
validates them), so a benchmark compares settings without new presets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasviz.errors import ConfigError
from nasviz.defaults import DEFAULT_SPACE


@dataclass(frozen=True)
class TablePair:
    """One benchmark table (a file name under the shared data folder, or a path), a metric, a space."""

    table: str
    metric: str
    space: str = DEFAULT_SPACE
    #: the fidelity ladder (:class:`~nasviz.objectives.fidelity_table.FidelitySpec` text) of a
    #: multi-fidelity benchmark; ``None``: the table is looked up at its metric only
    fidelity: str | None = None

    @property
    def label(self) -> str:
        return f"{Path(self.table).name}:{self.metric}"

    def path(self) -> Path:
        """The table's file: the path itself if it exists, else the shared data folder's file."""
        from nasviz.objectives.table import shared_data_path

        direct = Path(self.table).expanduser()
        if not direct.is_absolute() and not direct.is_file():
            from nasviz.datafiles import REPO_ROOT

            direct = REPO_ROOT / direct  # a file of the repository (data/nb201_digits.csv)
        if direct.is_file():
            return direct.resolve()
        shared = shared_data_path(self.table)
        if shared is None:
            raise ConfigError(f"benchmark table {self.table!r} not found (neither a file nor in the shared data folder; "
                              "set NASVIZ_SHARED_DATA)")
        return shared


_NB201_200 = (TablePair("nb201_test_accuracy.csv", "cifar10"), TablePair("nb201_test_accuracy.csv", "cifar100"))
_NB201_12 = tuple(TablePair("nb201_12epoch.csv", m) for m in ("cifar10_valid", "cifar10_test", "cifar100_valid", "cifar100_test"))

_NB101 = (TablePair("nb101_hash_20k.csv", "valid_accuracy_108", "nb101"), TablePair("nb101_500.csv", "valid_accuracy", "nb101"))
_DARTS = (TablePair("darts_725.csv", "valid_accuracy", "darts"),)
#: Issue 50's tables with fidelities. The digits ladder takes epoch 1 below the 3-epoch value so that
#: its ratio is 3, as NAS-Bench-101's (epoch 2 would make a ladder of ratio 1.7, where Hyperband's
#: reduction factor would round to 2 and differ from the other tables').
_FIDELITY = (
    TablePair("nb101_hash_20k.csv", "valid_accuracy_108", "nb101", "auto"),
    TablePair("nb201_test_accuracy.csv", "cifar10", "nb201", "12=cifar10_test@nb201_12epoch.csv,200=cifar10"),
    TablePair("nb201_test_accuracy.csv", "cifar100", "nb201", "12=cifar100_test@nb201_12epoch.csv,200=cifar100"),
    TablePair("data/nb201_digits.csv", "valid_accuracy", "nb201", "1=valid_accuracy_epoch_1,3=valid_accuracy"),
)

#: Named protocols (module docstring).
PROTOCOLS: dict[str, tuple[TablePair, ...]] = {
    "shared": _NB201_200 + _NB201_12,
    "nb201-200": _NB201_200,
    "nb201-12": _NB201_12,
    "nb101": _NB101,
    "all": _NB201_200 + _NB201_12 + _NB101 + _DARTS,
    "fidelity": _FIDELITY,
}


def parse_pairs(text: str, space: str = DEFAULT_SPACE) -> list[TablePair]:
    """``"TABLE:METRIC[@SPACE],..."`` or a protocol name from :data:`PROTOCOLS`."""
    if text in PROTOCOLS:
        return list(PROTOCOLS[text])
    pairs = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        body, _, pair_space = item.partition("@")
        table, sep, metric = body.rpartition(":")
        if not sep or not table or not metric:
            raise ConfigError(f"--tables: {item!r} is not TABLE:METRIC[@SPACE] (or one of {', '.join(PROTOCOLS)})")
        pairs.append(TablePair(table, metric, pair_space or space))
    if not pairs:
        raise ConfigError("--tables names no table")
    return pairs


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value:key=value"`` -> ``(name, {key: value})`` (values stay strings; the
    strategy's registry entry parses and validates them)."""
    name, *parts = [p.strip() for p in spec.split(":")]
    options: dict[str, Any] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ConfigError(f"strategy spec {spec!r}: {part!r} is not key=value")
        options[key] = value
    return name, options


def spec_batch_size(spec: str) -> int:
    """The batch ``spec`` asks for per step: its own ``batch_size`` option, else its registry
    preset's (5 for ``bo-tw2g-kdpp5``), else 1 (also for a name this code's registry does not know,
    as in an old report). Options are not validated here; ``bench search`` does that before a run."""
    from nasviz.components import STRATEGIES, default_batch_size

    name, options = parse_spec(spec)
    return int(options.get("batch_size", default_batch_size(name) if name in STRATEGIES else 1))


__all__ = ["PROTOCOLS", "TablePair", "parse_pairs", "parse_spec", "spec_batch_size"]
