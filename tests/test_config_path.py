"""Issue 49, "one typed path": a strategy option (``kernel``) is parsed once and checked once on
its way from the Search page's form, through the worker that rebuilds the run from the store, to
the GP that builds the kernel."""

from __future__ import annotations

import itertools

import pytest

import nasviz.components.compatibility as compatibility
from nasviz.dashboard import launching
from nasviz.dashboard.sources import DataSource, table_from_path
from nasviz.registry import Entry
from nasviz.spaces import nb201
from nasviz.store import RunStore


@pytest.fixture()
def counted(monkeypatch):
    """Counts of strategy-option parses, compatibility checks and the GP's kernels, by name."""
    counts = {"parse": 0, "check": 0, "kernels": []}
    parse = Entry.parse_options

    def counting_parse(self, options, owner=None):
        if str(owner or "").startswith("strategy "):
            counts["parse"] += 1
        return parse(self, options, owner)

    problems = compatibility.problems

    def counting_problems(*args, **kwargs):
        counts["check"] += 1
        return problems(*args, **kwargs)

    import nasviz.strategies.bo as bo

    make_kernel = bo.make_kernel

    def counting_kernel(name, *args, **kwargs):
        counts["kernels"].append(name)
        return make_kernel(name, *args, **kwargs)

    monkeypatch.setattr(Entry, "parse_options", counting_parse)
    monkeypatch.setattr(compatibility, "problems", counting_problems)  # what check_compatible calls
    monkeypatch.setattr(bo, "make_kernel", counting_kernel)
    return counts


def test_the_kernel_option_is_parsed_once_and_checked_once_from_the_form_to_the_gp(tmp_path, counted):
    path = tmp_path / "cells.csv"
    cells = itertools.islice(nb201.enumerate_all(), 60)
    path.write_text("arch,acc\n" + "".join(f"{nb201.format(a)},{i % 17}\n" for i, a in enumerate(cells)))
    source = DataSource.from_table(str(path), table_from_path(str(path)))
    options = {"kernel": "wl", "n_init": 2, "pool_size": 8, "n_restarts": 1}
    counted.update(parse=0, check=0, kernels=[])  # what loading the table did is not the launch

    # What the Search page does when Start is pressed: the form's check, then the run's worker
    # (in this thread: it reads the run back from the store and rebuilds the search from it).
    checked = launching.check_form(source, metric="acc", strategy="bo", options=options, budget=3, batch_size=1)
    assert checked.cannot_run is None and checked.error is None and checked.config.strategy.kernel == "wl"
    run_id = launching.start_run(tmp_path / "runs.sqlite", checked.config, source=source, background=False)

    assert RunStore(tmp_path / "runs.sqlite").get_run(run_id).status == "finished"
    assert "wl" in counted["kernels"]  # the option reached the GP
    assert (counted["parse"], counted["check"]) == (1, 1)


def test_a_stored_config_is_read_back_as_it_was_and_an_older_one_is_validated(counted):
    from nasviz.config import SearchConfig

    config = SearchConfig.create(table="t.csv", strategy="bo", strategy_options={"kernel": "wl"})
    counted.update(parse=0, check=0)
    assert SearchConfig.from_dict(config.to_dict()) == config  # what the store keeps: as it was ...
    assert (counted["parse"], counted["check"]) == (0, 0)  # ... not validated again
    older = {k: v for k, v in config.to_dict().items() if k != "kernel"}  # stored before `kernel` was
    assert SearchConfig.from_dict(older) == config
    assert (counted["parse"], counted["check"]) == (1, 1)


def test_make_strategy_still_parses_and_checks_raw_options(counted):
    from nasviz.errors import ConfigError
    from nasviz.strategies.factory import make_strategy

    strategy = make_strategy("bo", space="nb201", kernel="wl", n_init="2", batch_size=1)
    assert (counted["parse"], counted["check"]) == (1, 1) and strategy is not None
    with pytest.raises(ConfigError, match="needs a batch size of at least 2"):
        make_strategy("bo", space="nb201", batch="kdpp-quality", batch_size=1)
