"""The Learn page (issue 46) in AppTest: every lesson file loads, the page lists them, a lesson's
button starts its searches through the launching code, and its takeaway is computed from them."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.learn import load_lessons, parse_lesson
from nasviz.errors import InputError
from tests_app_helpers import APP, errors, shown_text  # noqa: F401

LEARN = "pages/learn.py"


def test_six_or_more_lessons_each_with_runs_a_view_and_a_takeaway():
    lessons = load_lessons()
    assert len(lessons) >= 6 and len({l.id for l in lessons}) == len(lessons)
    for lesson in lessons:
        assert lesson.paragraphs and lesson.look and lesson.runs
        assert sum(len(p) for p in lesson.paragraphs) < 1500, lesson.id  # one screen of text
        assert lesson.n_runs <= 6, lesson.id  # within a browser session's running-search limit


def test_a_bad_lesson_file_is_refused_naming_the_field():
    good = (load_lessons()[0].path and (__import__("nasviz.learn.lesson", fromlist=["LESSON_DIR"]).LESSON_DIR
                                        / "01-why-search.toml").read_text())
    with pytest.raises(InputError, match="x.toml.*takeaway"):
        parse_lesson(good.replace('takeaway = "regret-by-strategy"', 'takeaway = "magic"'), "x.toml")
    with pytest.raises(InputError, match="unknown strategy 'nope'"):
        parse_lesson(good.replace('strategy = "random"', 'strategy = "nope"', 1), "x.toml")


def test_a_teacher_adds_a_lesson_from_a_folder(tmp_path, monkeypatch):
    from nasviz.learn.lesson import LESSON_DIR

    text = (LESSON_DIR / "05-what-wl-features-say.toml").read_text()
    (tmp_path / "mine.toml").write_text(text.replace('id = "what-wl-features-say"', 'id = "my-lesson"')
                                        .replace("order = 5", "order = 7"))
    monkeypatch.setenv("NASVIZ_LESSONS", str(tmp_path))
    assert [l.id for l in load_lessons()][-1] == "my-lesson"


@pytest.mark.slow
def test_a_lesson_runs_and_proves_its_takeaway_on_the_page(store_path):
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(LEARN).run()
    assert not errors(at), [e.value for e in at.error]
    box = at.selectbox(key="learn_lesson")
    assert len(box.options) >= 6
    # the first lesson's six searches are counted in words, not "6 search(es)"
    assert any(c.value.startswith("6 searches on the embedded") for c in at.caption), [c.value for c in at.caption]
    assert "in the background: random, 100 evaluations, seeds 0, 1;" in at.button(key="learn_launch").help
    box.set_value("what-wl-features-say").run()
    at.button(key="learn_launch").click().run()  # searches run synchronously in tests
    assert not errors(at), [e.value for e in at.error]
    text = " ".join(shown_text(m.value) for m in at.markdown)
    assert "Takeaway." in text and "gradient +" in text and "At step 25" in text
    assert at.get("plotly_chart")
    assert at.button(key="learn_launch").label == "Run it again"


def test_cost_is_counted_in_full_evaluations():
    from nasviz.fidelity.spent import full_evaluations_spent
    from stored_records import evaluation

    def fid(budget, cost, full=False):
        return evaluation(cost=cost, info={"fidelity": {"fidelity": budget, "top": 200.0, "unit": "epochs", "full": full}})

    # two 12-epoch lookups, one 200-epoch restart: 12/200 + 12/200 + 200/200
    assert full_evaluations_spent([fid(12, 12.0), fid(12, 12.0), fid(200, 200.0, True)]).tolist() == pytest.approx(
        [0.06, 0.12, 1.12])
    # a single-fidelity search: each evaluation is one full evaluation, whatever its lookup took
    assert full_evaluations_spent([evaluation(cost=1e-5), evaluation(cost=None)]).tolist() == [1.0, 2.0]
    # cost in seconds (a table's cost column): the budget's share of the top one
    seconds = evaluation(cost=30.0, info={"fidelity": {"fidelity": 12, "top": 108, "unit": "seconds", "full": False}})
    assert full_evaluations_spent([seconds]).tolist() == pytest.approx([12 / 108])


def test_a_lesson_run_takes_a_fidelity_and_a_cost_budget_and_refuses_a_bad_one():
    from nasviz.learn.lesson import LESSON_DIR

    text = (LESSON_DIR / "07-spend-less-on-bad-cells.toml").read_text()
    lesson = parse_lesson(text, "07.toml")
    assert [(r.fidelity, r.cost_budget) for r in lesson.runs] == [("auto", 20.0), ("auto", 20.0), (None, None)]
    with pytest.raises(InputError, match="cost_budget"):
        parse_lesson(text.replace("cost_budget = 20", "cost_budget = -1", 1), "07.toml")


@pytest.mark.slow
def test_the_multi_fidelity_lesson_compares_at_equal_cost_on_the_page(store_path):
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page(LEARN).run()
    at.selectbox(key="learn_lesson").set_value("spend-less-on-bad-cells").run()
    at.button(key="learn_launch").click().run()  # searches run synchronously in tests
    assert not errors(at), [e.value for e in at.error]
    text = " ".join(shown_text(m.value) for m in at.markdown)
    assert "Takeaway." in text and "For the cost of 20 full trainings" in text, text[-800:]
    found = re.search(r"for Hyperband \((\d+) cells looked at, (\d+) trained fully\)", text)
    assert found and int(found.group(1)) > int(found.group(2)) > 0  # most cells stopped at 12 epochs
    assert "?" not in text.split("Takeaway.")[1].split(".")[0]  # every number filled in
    assert at.get("plotly_chart")
