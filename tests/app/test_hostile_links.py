"""Links a visitor may type or be sent (issue 47, finding 4): every page answers a malformed query
parameter with its default or a sentence, never a traceback."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests_app_helpers import APP, shown_text

#: (page, parameter, value): each crashed a page before (``isdigit()`` accepts ``²``, which
#: ``int()`` refuses; SQLite refuses integers past 2**63 - 1; ``int()`` refuses 5,000 digits).
LINKS = [(page, "run", value) for page in ("pages/search.py", "pages/runs.py", "pages/kernels.py")
         for value in ("²", "99999999999999999999", "9" * 5000, "-1", "1e3", "")] + [
    ("pages/compare.py", "runs", "²,99999999999999999999," + "9" * 5000),
    ("pages/kernels.py", "n", "nan"), ("pages/kernels.py", "n", "1e999"), ("pages/kernels.py", "seed", "²"),
    ("pages/interpretability.py", "n", "inf"),
    ("pages/architectures.py", "a", "er:P=0.1,seed=1e999|0-1"),
]


@pytest.fixture()
def one_run(store_path, synthetic_table):
    from nasviz.runner import start_run
    from nasviz.store import RunStore

    start_run(RunStore(store_path), {"table": str(synthetic_table), "metric": "acc", "strategy": "random", "budget": 5})
    return store_path


@pytest.mark.slow
@pytest.mark.parametrize("page, param, value", LINKS, ids=[f"{p.split('/')[-1]}-{k}={v[:12]}" for p, k, v in LINKS])
def test_a_malformed_link_never_raises(one_run, page, param, value):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params[param] = value
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow
def test_a_wired_string_that_overflows_is_named_on_the_architectures_page(one_run):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"space": "wired", "a": "er:P=0.1,seed=1e999|0-1"})
    at.switch_page("pages/architectures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("not a valid wired architecture" in shown_text(e.value) for e in at.error), \
        [e.value for e in at.error]
