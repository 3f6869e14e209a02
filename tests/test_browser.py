"""Figure F12 on the built mask page, driven in Debian's chromium the way a reader uses it.

Run with the other book tests, or alone:
``BOOK_TEST_BUILD=_build/fig-test-html .venv/bin/pytest -m browser tests/test_browser.py``.
The book is built once per session (``book_html``); the page is opened from disk (file://).
"""

from __future__ import annotations

import pytest
from conftest import BUILD, assert_axe_clean, assert_offline, set_theme, settle, use_the_figure

pytestmark = pytest.mark.browser

SHOTS = BUILD / "screenshots"
FIGURE = "[data-step-figure='F12']"
STATUS = f"{FIGURE} [role=status]"


@pytest.fixture()
def open_mask(open_page):
    """Open ch02/mask.html once F12 is ready (see conftest.open_page); without MathJax unless a test
    looks at the formulas, the page's size or its requests (``maths=True``)."""

    def open_(maths: bool = False, **options):
        return open_page(
            "ch02/mask.html", ready=f"{FIGURE}.is-ready", without_maths=not maths, **options
        )

    return open_


def status(page) -> str:
    return page.locator(STATUS).inner_text()


def visible_steps(page) -> list[str]:
    frames = page.locator(f"{FIGURE} .step-figure-frame").all()
    return [f.get_attribute("data-step") for f in frames if f.is_visible()]


def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


def test_still_by_default_then_keys_and_buttons_step_and_the_status_follows(open_mask):
    page = open_mask(clock=True)
    assert status(page) == "第1步，共5步"
    page.clock.run_for(60_000)  # a minute, far longer than any dwell: nothing may move unasked
    assert status(page) == "第1步，共5步"
    assert visible_steps(page) == ["1"]
    assert page.locator(STATUS).get_attribute("aria-live") == "polite"
    assert button(page, "播放").is_visible() and button(page, "暂停").count() == 0
    # Keys.
    stage = page.locator(f"{FIGURE} .step-figure-stage")
    assert stage.get_attribute("tabindex") == "0"
    stage.focus()
    page.keyboard.press("ArrowLeft")  # already first: stays
    assert status(page) == "第1步，共5步"
    page.keyboard.press("ArrowRight")
    assert status(page) == "第2步，共5步" and visible_steps(page) == ["2"]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert status(page) == "第2步，共5步"
    page.keyboard.press("End")
    assert status(page) == "第5步，共5步" and visible_steps(page) == ["5"]
    page.keyboard.press("ArrowRight")  # already last: stays
    assert status(page) == "第5步，共5步"
    page.keyboard.press("Home")
    assert status(page) == "第1步，共5步" and visible_steps(page) == ["1"]
    # Buttons.
    for name in ("上一步", "下一步", "播放", "放大图形"):
        assert button(page, name).evaluate("b => b.tagName + ':' + b.type") == "BUTTON:button"
    button(page, "下一步").click()
    button(page, "下一步").click()
    assert status(page) == "第3步，共5步"
    caption = page.locator(f"{FIGURE} .step-figure-frame.is-current .step-figure-caption")
    assert caption.inner_text() == "3 / 5 · 处理绝对位置 2"
    button(page, "上一步").click()
    assert status(page) == "第2步，共5步"
    assert button(page, "上一步").get_attribute("aria-disabled") == "false"


def test_a_button_at_its_end_does_nothing(open_mask):
    page = open_mask(clock=True)
    page.get_by_label("停留时间").select_option("1000")
    button(page, "播放").click()
    page.clock.run_for(1000)
    assert status(page) == "第2步，共5步"
    button(page, "暂停").click()
    page.keyboard.press("Home")
    assert button(page, "上一步").get_attribute("aria-disabled") == "true"
    button(page, "播放").click()
    button(page, "上一步").click(force=True)  # disabled on the first step: playing goes on
    assert button(page, "暂停").is_visible()
    page.clock.run_for(1000)
    assert status(page) == "第2步，共5步"


def test_play_advances_and_stops_by_itself_on_the_last_frame(open_mask):
    page = open_mask(clock=True)
    page.get_by_label("停留时间").select_option("1000")
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    page.keyboard.press("Space")
    assert button(page, "暂停").is_visible()
    page.clock.run_for(3999)
    assert status(page) == "第4步，共5步"
    page.clock.run_for(1)  # four dwells: the last frame
    assert status(page) == "第5步，共5步"
    page.clock.run_for(10_000)  # many dwells more: it has stopped, not wrapped around
    assert status(page) == "第5步，共5步"
    assert button(page, "播放").is_visible() and button(page, "暂停").count() == 0
    # Space again plays from the start; Space once more pauses.
    page.keyboard.press("Space")
    assert status(page) == "第1步，共5步"
    page.clock.run_for(1000)
    assert status(page) == "第2步，共5步"
    page.keyboard.press("Space")
    page.clock.run_for(10_000)
    assert status(page) == "第2步，共5步"


def test_dwell_time_sets_the_pace(open_mask):
    page = open_mask(clock=True)
    for dwell in (1000, 3000):
        page.get_by_label("停留时间").select_option(str(dwell))
        button(page, "播放").click()
        for step in (2, 3):  # each frame stays exactly one dwell, the first as long as the next
            page.clock.run_for(dwell - 1)
            assert status(page) == f"第{step - 1}步，共5步", dwell
            page.clock.run_for(1)
            assert status(page) == f"第{step}步，共5步", dwell
        button(page, "暂停").click()
        page.locator(f"{FIGURE} .step-figure-stage").focus()
        page.keyboard.press("Home")


def test_enlarge_opens_a_dialog_and_escape_returns_focus(open_mask):
    page = open_mask()
    enlarge = button(page, "放大图形")
    enlarge.click()
    dialog = page.locator("dialog.step-figure-dialog")
    assert dialog.evaluate("d => d.open && d.matches(':modal')")
    assert dialog.locator(".step-figure-stage").is_visible()
    page.keyboard.press("ArrowRight")  # the player works in the dialog
    assert dialog.locator("[role=status]").inner_text() == "第2步，共5步"
    page.keyboard.press("Escape")
    page.wait_for_function(
        "!document.querySelector('dialog.step-figure-dialog').open", timeout=2_000
    )
    # Focus goes back in the dialog's "close" event, a task after `open` turns false: wait for it.
    page.wait_for_function("document.activeElement.textContent.includes('放大图形')", timeout=2_000)
    assert (
        page.locator(f"{FIGURE} .step-figure-stage").count() == 1
    )  # the player is back in the figure
    assert status(page) == "第2步，共5步"


def enlarged_controls_in_view(page, height: int) -> None:
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    page.keyboard.press("End")  # the tallest frame
    button(page, "放大图形").click()
    dialog = page.locator("dialog.step-figure-dialog")
    for part in (
        "[role=status]",
        ".step-figure-controls",
        ".step-figure-frame.is-current .step-figure-caption",
    ):
        box = dialog.locator(part).bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, (part, box)
    assert button(page, "关闭").is_visible()


def test_the_enlarged_view_opens_with_its_controls_in_view(open_mask):
    enlarged_controls_in_view(open_mask(maths=True, width=1280, height=600), 600)


def test_on_a_phone_the_figure_scrolls_not_the_page_and_the_enlarged_view_fits(open_mask):
    page = open_mask(maths=True, width=360, height=800)
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    for key in ("Home", "End"):
        page.keyboard.press(key)
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), key
    # Frame 5's tables are wider than a phone: its own box scrolls sideways, by keyboard too.
    stage = page.locator(f"{FIGURE} .step-figure-stage")
    assert stage.evaluate("s => s.scrollWidth > s.clientWidth")
    page.keyboard.press("Shift+ArrowRight")
    page.wait_for_function(
        "document.querySelector('[data-step-figure=F12] .step-figure-stage').scrollLeft > 0"
    )
    assert status(page) == "第5步，共5步"  # Shift + arrow scrolls; it does not step
    page.keyboard.press("ArrowLeft")
    assert status(page) == "第4步，共5步"
    enlarged_controls_in_view(page, 800)


def test_reduced_motion_still_steps_without_animation(open_mask):
    page = open_mask(reduced_motion="reduce")
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    page.keyboard.press("ArrowRight")
    assert status(page) == "第2步，共5步" and visible_steps(page) == ["2"]
    current = page.locator(f"{FIGURE} .step-figure-frame.is-current")
    assert current.evaluate("f => getComputedStyle(f).animationName") == "none"


def test_print_shows_every_frame_and_no_controls(open_mask):
    page = open_mask()
    page.keyboard.press("Tab")
    page.emulate_media(media="print")
    assert visible_steps(page) == ["1", "2", "3", "4", "5"]
    captions = page.locator(f"{FIGURE} .step-figure-caption").all_inner_texts()
    assert [c.split(" · ")[0] for c in captions] == [f"{k} / 5" for k in range(1, 6)]
    assert page.locator(f"{FIGURE} .step-figure-explanation").count() == 5
    assert not page.locator(f"{FIGURE} .step-figure-controls").is_visible()
    assert not page.locator(f"{FIGURE} .step-figure-help").is_visible()


# The page's own figure CSS (F12) is checked in both themes (the whole page: tests/test_pages.py).
# assert_axe_clean waits for the frame's fade-in to end: mid-fade, text is paler.
def test_the_figure_has_no_serious_accessibility_violations_in_either_theme(open_mask):
    page = open_mask(maths=True, theme="light")
    for scheme in ("light", "dark"):  # the theme follows the reader's system setting as it changes
        set_theme(page, scheme)
        assert_axe_clean(page, FIGURE, note=scheme)
        # The same in the enlarged view, where the player sits in a modal dialog.
        button(page, "放大图形").click()
        assert_axe_clean(page, "dialog.step-figure-dialog", note=scheme)
        page.keyboard.press("Escape")
        page.wait_for_function("!document.querySelector('dialog.step-figure-dialog').open")


def test_no_request_leaves_the_book_and_no_console_error(open_mask, book_html):
    page = open_mask(maths=True)
    use_the_figure(page, FIGURE)
    assert any("/_static/mathjax/" in url for url in page.requests), (
        "maths comes from _static/mathjax"
    )
    assert any("/_static/step_figure.js" in url for url in page.requests)
    assert_offline(page, book_html)
    assert page.errors == []


def test_screenshots(open_mask):
    """Wide and narrow pictures of the figure, for review (kept in _build/screenshots)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = open_mask(maths=True, width=1280, height=2400)
    for width, name in ((1280, "f12-wide.png"), (360, "f12-narrow.png")):
        page.set_viewport_size({"width": width, "height": 2400})
        figure = page.locator(FIGURE)
        # Put the figure below the theme's sticky header, then cut it out of the viewport.
        top = "f => window.scrollTo(0, f.getBoundingClientRect().top + window.scrollY - 72)"
        page.evaluate(top, figure.element_handle())
        settle(page)
        box = figure.bounding_box()
        # The figure fits the screen: the page itself never scrolls sideways (a wide table scrolls
        # inside its own box), and the player's buttons are inside the viewport.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        controls = page.locator(f"{FIGURE} .step-figure-controls").bounding_box()
        assert controls["x"] >= 0 and controls["x"] + controls["width"] <= width
        clip = {"x": 0, "y": box["y"] - 12, "width": width, "height": box["height"] + 24}
        page.screenshot(path=str(SHOTS / name), clip=clip)
