"""Every lesson of the Learn page end to end, in real Chromium against a real server (issue 46).

For each lesson file: open it by its link, press "Run this lesson" (real worker processes on a
fresh store), wait for the takeaway, check that its sentence carries numbers and its figure is
drawn, then press "Open the view" and check that the view's page draws its charts without an
error. Screenshots of each lesson with its takeaway, and of its view at 1400 px, 390 px (nothing
wider than the screen) and in dark mode, go to ``test-artifacts/lesson-<id>-*.png``.

One server and one Chromium serve all the lessons, in order. Each lesson's button is pressed
as soon as the lesson before it shows its takeaway (its own searches ended), so its searches run
while the lesson before is checked in its view at every width, as a class moving on would; the
whole course takes a few minutes on two cores.
"""

from __future__ import annotations

import re
import time

import pytest

from browser_helpers import (ARTIFACTS, assert_nothing_wider_than_the_screen, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_until,
                             whole_page_screenshot)

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]

#: Seconds a lesson may take from its button to its takeaway on a 2-core machine (lesson 1 runs six
#: searches of 100 evaluations; lesson 6 trains eight networks live).
LESSON_TIMEOUT = 420

VIEW_WIDTHS = ((1400, "light"), (390, "light"), (1400, "dark"))


def _lesson_ids() -> list[str]:
    from nasviz.learn.lesson import load_lessons

    return [lesson.id for lesson in load_lessons()]


@pytest.fixture(scope="module")
def course_server(tmp_path_factory):
    """A server on the embedded default table with an empty store."""
    from nasviz.dashboard.sources import default_table_path
    from nasviz.store import RunStore

    if default_table_path() is None:
        pytest.skip("no default data: data/nb201_cifar.csv and the shared NAS-Bench-201 table are both absent")
    folder = tmp_path_factory.mktemp("course")
    store = folder / "store.sqlite"
    try:
        with streamlit_server(store, folder / "server.log") as url:
            yield url
    finally:
        for run in RunStore(store).list_runs() if store.exists() else []:
            if run.status == "running":
                RunStore(store).request_stop(run.id)


class Course:
    """One Chromium for the course; each lesson's page, once its "Run this lesson" is pressed."""

    def __init__(self, browser, url: str, selected: list[str]):
        self.browser, self.url, self.selected = browser, url, selected
        self.started: dict[str, object] = {}

    def start(self, lesson_id: str):
        """Open the lesson by its link on a fresh page and press its button (nothing of it in the
        store yet); the page, left on the lesson."""
        if lesson_id not in self.started:
            page = self.browser.new_page(viewport={"width": 1400, "height": 1400})
            page.set_default_timeout(60_000)
            page.goto(f"{self.url}/learn?lesson={lesson_id}")
            launch = page.locator(".st-key-learn_launch button")
            wait_until(lambda: launch.count() > 0, 90, f"the button of lesson {lesson_id}")
            assert "Run this lesson" in launch.first.inner_text()  # a fresh store: nothing of this lesson yet
            launch.first.click()
            self.started[lesson_id] = page
        return self.started[lesson_id]

    def start_next(self, lesson_id: str) -> None:
        """Press the button of the lesson after ``lesson_id`` (when its test is to run)."""
        later = self.selected[self.selected.index(lesson_id) + 1:]
        if later:
            self.start(later[0])


@pytest.fixture(scope="module")
def course(course_server, request):
    from playwright.sync_api import sync_playwright

    ids = _lesson_ids()
    selected = [i for i in ids if any(item.name.endswith(f"[{i}]") and item.module is request.module
                                      for item in request.session.items)]
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield Course(browser, course_server, selected)
        browser.close()


def _no_error(page, where: str) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, f"a traceback on {where}"
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, \
        f"an error on {where}: {page.locator('[data-testid=stAlertContentError]').first.inner_text()}"


def _open_view(page, lesson_id: str) -> None:
    """From the lesson (its runs already in the store), press "Open the view" and wait for a chart."""
    button = page.locator(".st-key-learn_open button")
    wait_until(lambda: button.count() > 0, 120, f"the view button of {lesson_id}")
    for _ in range(4):  # a click during the page's last rerun (the runs just ended) can be dropped
        button.first.click()
        try:
            wait_until(lambda: page.locator(".st-key-learn_lesson").count() == 0, 15, f"the view of {lesson_id} to open")
            break
        except AssertionError:
            page.screenshot(path=str(ARTIFACTS / f"lesson-{lesson_id}-view-not-open.png"))
    else:
        raise AssertionError(f"the view of {lesson_id} did not open: still on the Learn page")
    wait_until(lambda: page.locator(".stPlotlyChart .main-svg").count() > 0, 180, f"a chart in the view of {lesson_id}")
    time.sleep(2.0)  # the rest of the page's charts


@pytest.mark.parametrize("lesson_id", _lesson_ids())
def test_each_lesson_runs_shows_its_takeaway_and_opens_its_view(course, lesson_id):
    page = course.start(lesson_id)  # pressed already if the lesson before has shown its takeaway
    body = page.locator('[data-testid="stMain"]')
    wait_until(lambda: "Takeaway." in body.inner_text(), LESSON_TIMEOUT, f"the takeaway of {lesson_id}")
    takeaway = next(line for line in body.inner_text().splitlines() if "Takeaway." in line)
    # numbers computed from the runs just made, not the template's placeholders
    assert "{" not in takeaway and re.search(r"\d", takeaway), takeaway
    chart = page.locator(".st-key-learn_chart .main-svg")
    wait_until(lambda: chart.count() > 0, 60, f"the takeaway's figure of {lesson_id}")
    _no_error(page, f"lesson {lesson_id}")
    course.start_next(lesson_id)  # its searches run while this lesson's views are checked
    page.mouse.move(1, 1)  # no button's tooltip over the text in the screenshot
    whole_page_screenshot(page, ARTIFACTS / f"lesson-{lesson_id}-takeaway-1400.png")

    _open_view(page, lesson_id)
    _no_error(page, f"the view of {lesson_id}")
    page.close()

    for width, scheme in VIEW_WIDTHS:
        view = course.browser.new_page(viewport={"width": width, "height": 1200}, color_scheme=scheme,
                                       is_mobile=width < 500, has_touch=width < 500)
        view.set_default_timeout(60_000)
        view.goto(f"{course.url}/learn?lesson={lesson_id}")  # the store's runs: no new searches
        _open_view(view, lesson_id)
        _no_error(view, f"the view of {lesson_id} at {width} px, {scheme}")
        view.mouse.move(1, 1)
        whole_page_screenshot(view, ARTIFACTS / f"lesson-{lesson_id}-view-{width}-{scheme}.png")
        if width < 500:
            assert_nothing_wider_than_the_screen(view, lesson_id)
        view.close()
