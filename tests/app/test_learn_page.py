"""The Learn page (issue 46) in AppTest: every lesson file loads, the page lists them, a lesson's
button starts its searches through the launching code, and its takeaway is computed from them."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from nasviz.learn import load_lessons, parse_lesson
from nasviz.errors import InputError
from tests_app_helpers import APP, errors  # noqa: F401

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
    box.set_value("what-wl-features-say").run()
    at.button(key="learn_launch").click().run()  # searches run synchronously in tests
    assert not errors(at), [e.value for e in at.error]
    text = " ".join(m.value for m in at.markdown)
    assert "Takeaway." in text and "gradient +" in text and "At step 25" in text
    assert at.get("plotly_chart")
    assert at.button(key="learn_launch").label == "Run it again"
