"""What a search uses when nobody chose: one place for the page, ``run`` and ``bench search``.

The Search page, ``python -m nasviz run`` and ``python -m nasviz bench search`` read the default
table, space, strategy, budget and seed from here, so the three agree (issue 46). The only
difference is deliberate: the page pauses after each step (:data:`PAGE_STEP_DELAY`, visible and
changeable in its form) so that a class can watch a table search, while the command line runs
unpaced (:data:`CLI_STEP_DELAY`).

This module imports nothing from nasviz: anything may read it. The functions that need the
registries or the file system are :func:`nasviz.components.default_strategy` and
:func:`nasviz.objectives.default_table_path`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The tables that ship with the repository (``data/README.md`` says how each was made).
DATA_DIR = REPO_ROOT / "data"

#: NAS-Bench-201's CIFAR-10 / CIFAR-100 results, 200-epoch test and 12-epoch valid/test
#: (``python -m nasviz table make-default``; MIT licence, ``data/NB201-LICENSE.txt``). Its first
#: metric, ``cifar10_test_200ep``, is the one a search maximises when none is named.
DEFAULT_TABLE = DATA_DIR / "nb201_cifar.csv"
#: Every NB201 cell trained on scikit-learn's digits (``python -m nasviz tabulate``): the table
#: that live training on digits reproduces, kept for that, not the first lesson.
DIGITS_TABLE = DATA_DIR / "nb201_digits.csv"

#: The space of the embedded tables' architectures.
DEFAULT_SPACE = "nb201"
#: The GP kernel of a model-based strategy whose entry and options name none (TW with 2-grams).
DEFAULT_KERNEL = "tw2g"
#: The tuned single-fidelity default (``nasviz.components`` says how it was chosen). It needs
#: categorical parameters; on other spaces the page offers the next strategy that fits.
DEFAULT_STRATEGY = "bo-tw2g-hamming-ei"
#: Evaluations of a search, and its seed.
DEFAULT_BUDGET = 100
DEFAULT_SEED = 0
#: Seconds the page's search pauses after each step by default: about one live refresh of the
#: page per step, so a class sees every step (0 = full speed; the form's field changes it).
PAGE_STEP_DELAY = 1.0
#: The command line runs at full speed unless ``--step-delay`` is given.
CLI_STEP_DELAY = 0.0
#: The strategies a search starts with when none is named, in order of preference: the first
#: that can search the space (:func:`nasviz.components.default_strategy`). The default needs
#: categorical parameters; paper 000's ``bo-tw2g-ucb`` searches every space.
STRATEGY_PREFERENCE = (DEFAULT_STRATEGY, "bo-tw2g-ucb", "bo-wl-ei", "bo", "random")
#: What ``bench search`` compares when no strategies are named: the baselines and the default.
BENCH_STRATEGIES = ("random", "evolution", DEFAULT_STRATEGY)


class EmbeddedTable(NamedTuple):
    """A table shipped in ``data/``: how the sidebar names it, its file, what it is for."""

    label: str
    path: Path
    about: str


#: The embedded tables the page offers, the default first.
EMBEDDED_TABLES: tuple[EmbeddedTable, ...] = (
    EmbeddedTable("NAS-Bench-201 on CIFAR-10/100", DEFAULT_TABLE,
                  "NAS-Bench-201's trained results: 200-epoch test accuracy on CIFAR-10 and CIFAR-100, "
                  "and 12-epoch validation and test accuracy (MIT licence, NAS-Bench-201 / NATS-Bench)."),
    EmbeddedTable("NB201 cells trained on digits", DIGITS_TABLE,
                  "Every cell trained ten times for three epochs on scikit-learn's digits: what live training "
                  "on digits reproduces."),
)
