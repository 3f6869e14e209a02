"""F12's explore panel on the built mask page, driven in Debian's chromium the way a reader uses it.

Every table, mark, count and sentence the panel shows is compared with what the teaching code
computes directly (02_attention.visibility, additive_mask, row_index_visibility, masked_attention
and the sentence functions of the book's chapter.mask), for every state the controls can reach, and
every sentence it shows spaces Chinese from Latin letters and digits. The panel's data is tested
without a browser in tests/test_chapter_mask.py; nothing here decodes it as the script does.
Run alone: ``BOOK_TEST_BUILD=_build/explore-test-html .venv/bin/pytest tests/test_explore.py``.
"""

from __future__ import annotations

import importlib

import pytest
from conftest import BUILD, ROOT, assert_axe_clean, assert_offline, set_theme, settle
from test_chapter_mask import CJK_NEXT_TO_LATIN

from chapter import fmt, mask_figure
from chapter import mask as mask_page

pytestmark = pytest.mark.browser

att = importlib.import_module("02_attention")

FIGURE = "[data-step-figure='F12']"
PANEL = f"{FIGURE} .step-figure-explore"
STATUS = f"{PANEL} .step-figure-explore-status"
ID = "#step-figure-explore-1-"
SHOTS = BUILD / "screenshots"


@pytest.fixture()
def open_mask(open_page):
    """Open ch02/mask.html once the panel is built (ready=False: do not wait; see conftest.open_page);
    without MathJax unless a test looks at the formulas, the page's size or its requests (``maths=True``)."""

    def open_(ready: bool = True, maths: bool = False, **options):
        return open_page(
            "ch02/mask.html",
            ready=f"{PANEL} .step-figure-explore-panel" if ready else None,
            without_maths=not maths,
            **options,
        )

    return open_


# -- what Python says a state shows --------------------------------------------------------------
def expected(past: int, new: int, pad: str, count: int, causal: bool) -> dict:
    n_key = past + new
    valid = mask_figure.pad_valid(n_key, pad, count)
    flags = valid or [True] * n_key
    visible = att.visibility(new, n_key, causal=causal, past=past, key_valid=valid)
    mask = att.additive_mask(visible)
    wrong = (
        [[a and ok for a, ok in zip(row, flags)] for row in att.row_index_visibility(new, n_key)]
        if causal
        else visible
    )
    facts = mask_page.visibility_facts(new, past=past, key_valid=valid, causal=causal)
    rows = [
        {**r, "sentence": mask_page.row_sentence(r, past), "lost": mask_page.lost_sentence(r)}
        for r in facts["rows"]
    ]
    empty = [not any(row) for row in visible]
    lost = [[j for j in range(n_key) if r[j] and not w[j]] for r, w in zip(visible, wrong)]
    return {
        "status": mask_figure.explore_status(facts) + mask_figure.lost_status(facts),
        "heads": [
            f"行 {i}（绝对位置 {past + i}）" + ("（整行被屏蔽）" if empty[i] else "")
            for i in range(new)
        ],
        "keys": [f"Key {j}" for j in range(n_key)],
        "visible": [[fmt.mark(f) for f in row] for row in visible],
        "mask": [[fmt.short(m) for m in row] for row in mask],
        "wrong_heads": [f"行 {i}（误当位置 {i}）" for i in range(new)],
        "wrong": [[fmt.mark(f) for f in row] for row in wrong],
        "marks": [[a != b for a, b in zip(r, w)] for r, w in zip(visible, wrong)],
        "counts": [
            [str(sum(j < past for j in js)), str(sum(j >= past for j in js))] for js in lost
        ],
        "sentences": [r["sentence"] for r in rows],
        "lost": [r["lost"] for r in rows],
        "note": mask_figure.empty_row_note(facts),
    }


def reachable():
    for past in range(7):
        for new in range(1, 7):
            for causal in (True, False):
                yield past, new, "none", 0, causal
                for pad in ("front", "end"):
                    for count in range(1, past + new + 1):
                        yield past, new, pad, count, causal


# -- what the page shows: set the controls as a script would, read the panel back -----------------
READ = """
([states, id]) => {
  const get = (name) => document.querySelector(id + name);
  const fire = (el) => el.dispatchEvent(new Event("change", {bubbles: true}));
  const pads = ["none", "front", "end"];
  const text = (cell) => cell.firstChild ? cell.firstChild.textContent : "";
  const grid = (table) => [...table.tBodies[0].rows].map(tr => [...tr.cells].slice(1).map(text));
  // As a reader does: change a control only when it does not show the wanted value already.
  const choose = (name, value) => {
    const el = get(name);
    if (el.value !== value) { el.value = value; fire(el); }
  };
  get("wrong").checked = true; fire(get("wrong"));
  return states.map(([past, fresh, pad, count, causal]) => {
    choose("past", String(past));
    choose("new", String(fresh - 1));
    if (get("causal").checked !== causal) { get("causal").checked = causal; fire(get("causal")); }
    choose("pad", String(pads.indexOf(pad)));
    if (pad !== "none") choose("count", String(count - 1));
    const panel = get("past").closest(".step-figure-explore");
    const [vis, mask, wrong] = panel.querySelectorAll("table");
    const lists = panel.querySelectorAll("ul");
    const note = panel.querySelector(".step-figure-explore-note");
    const n = vis.tHead.rows[0].cells.length - 1;
    return {
      status: panel.querySelector(".step-figure-explore-status").textContent,
      heads: [...vis.tBodies[0].rows].map(tr => tr.cells[0].textContent),
      keys: [...vis.tHead.rows[0].cells].slice(1).map(c => c.textContent),
      visible: grid(vis), mask: grid(mask),
      wrong_heads: [...wrong.tBodies[0].rows].map(tr => tr.cells[0].textContent),
      wrong: grid(wrong).map(r => r.slice(0, n)),
      marks: [...wrong.tBodies[0].rows].map(tr => [...tr.cells].slice(1, n + 1).map(
        c => c.querySelector(".step-figure-explore-sr") !== null)),
      counts: grid(wrong).map(r => r.slice(n)),
      sentences: [...lists[0].children].map(li => li.textContent),
      lost: [...lists[1].children].map(li => li.textContent),
      note: note ? note.textContent : "",
    };
  });
}
"""


def shown(page, states: list[tuple]) -> list[dict]:
    return page.evaluate(READ, [[list(s) for s in states], ID])


def test_every_reachable_state_shows_what_the_teaching_code_computes(open_mask):
    page = open_mask()
    states = list(reachable())
    assert len(states) == 1176
    for state, seen in zip(states, shown(page, states)):
        assert seen == expected(*state), state
        said = [seen["status"], seen["note"], *seen["heads"], *seen["wrong_heads"]]
        said += seen["sentences"] + seen["lost"]
        assert not [t for t in said if CJK_NEXT_TO_LATIN.search(t)], state
    assert page.errors == []


def test_it_opens_where_f12_ends_and_its_lost_sentences_are_the_fifth_frames(open_mask):
    page = open_mask()
    # Its first line is the one the mask page writes under the figure's :explore-intro:.
    source = (ROOT / "book" / "ch02" / "mask.md").read_text(encoding="utf-8")
    intro = page.locator(f"{PANEL} .step-figure-explore-intro").text_content()
    assert f"\n:explore-intro: {intro}\n" in source and len(intro) > 20
    assert page.locator(f"{ID}past").input_value() == str(mask_page.PAST)
    assert page.locator(f"{ID}new").input_value() == str(mask_page.NEW - 1)
    facts = mask_page.visibility_facts(mask_page.NEW, past=mask_page.PAST)
    assert page.locator(STATUS).inner_text() == mask_figure.explore_status(facts)
    page.get_by_label("把本批行号当位置（写错的偏移）").check()
    fifth = page.locator(
        f"{FIGURE} .step-figure-frame[data-step='5'] .step-figure-explanation"
    ).text_content()
    lost = page.locator(f"{PANEL} ul").nth(1).locator("li").all_text_contents()
    assert lost == [mask_page.lost_sentence(r) for r in facts["rows"]]
    assert all(sentence in fifth for sentence in lost)  # the same words as F12's fifth frame


def test_the_wrong_offset_marks_the_lost_cells_and_counts_them(open_mask):
    page = open_mask()
    page.get_by_label("把本批行号当位置（写错的偏移）").check()
    (seen,) = shown(page, [(3, 2, "none", 0, True)])
    # Row 0 (position 3) loses Key 1, Key 2 from the cache and Key 3 (itself); row 1 loses Key 2, Key 3, Key 4.
    assert seen["marks"] == [[False, True, True, True, False], [False, False, True, True, True]]
    assert seen["counts"] == [["2", "1"], ["1", "2"]]
    cell = page.locator(f"{PANEL} table").nth(2).locator("tbody tr").first.locator("td").nth(1)
    assert "与正确的表不同" in cell.text_content()  # in words, not only the mark and the frame
    assert cell.locator("[aria-hidden=true]").text_content() == "◆"
    # Turning it off removes the contrast table and the lost sentences.
    page.get_by_label("把本批行号当位置（写错的偏移）").uncheck()
    assert page.locator(f"{PANEL} table").count() == 2 and page.locator(f"{PANEL} ul").count() == 1


def test_a_fully_masked_row_is_flagged_with_the_books_policy(open_mask):
    page = open_mask()
    (seen,) = shown(page, [(3, 2, "front", 5, True)])
    assert seen["heads"] == ["行 0（绝对位置 3）（整行被屏蔽）", "行 1（绝对位置 4）（整行被屏蔽）"]
    with pytest.raises(ValueError) as error:
        att.attention([[0.0]] * 5, [[0.0]] * 5, [[1.0]] * 5, key_valid=[False] * 5)
    assert str(error.value).startswith("第 0 个查询行")
    assert 'empty_row="error"' in seen["note"] and 'empty_row="zero"' in seen["note"]
    assert "ValueError: 第 0 个查询行没有任何可见的 Key" in seen["note"]


def focused(page) -> str:
    return page.evaluate("document.activeElement.id")


def outline(page) -> str:
    """The focused element's outline: the panel draws a thick solid ring (not the browser's default)."""
    return page.evaluate(
        "(s => s.outlineStyle + ' ' + s.outlineWidth)(getComputedStyle(document.activeElement))"
    )


def test_every_control_works_by_keyboard_with_visible_focus(open_mask):
    page = open_mask()
    page.locator(f"{PANEL} .step-figure-explore-intro").click()  # start just before the controls
    order = []
    for _ in range(6):
        page.keyboard.press("Tab")
        order.append(focused(page).rsplit("-", 1)[-1])
        assert outline(page) == "solid 3px", order
    assert order == [
        "past",
        "new",
        "pad",
        "causal",
        "wrong",
        "",
    ]  # count is hidden with no PAD; then the tables
    status = page.locator(STATUS)

    page.locator(f"{ID}past").focus()
    page.keyboard.press("ArrowDown")
    assert page.locator(f"{ID}past").input_value() == str(mask_page.PAST + 1)
    assert status.inner_text() == mask_figure.explore_status(
        mask_page.visibility_facts(mask_page.NEW, past=mask_page.PAST + 1)
    )

    page.keyboard.press("Tab")
    page.keyboard.press("ArrowUp")  # new: 2 → 1
    assert status.inner_text().startswith("1 个查询行、")

    page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")  # PAD in front: the count appears next in the order
    page.keyboard.press("Tab")
    assert focused(page).endswith("count") and outline(page) == "solid 3px"
    for _ in range(4):
        page.keyboard.press("ArrowDown")  # 1 → 5 PAD in front of 5 keys
    assert page.locator(f"{ID}count").input_value() == "4"
    facts = mask_page.visibility_facts(
        1, past=mask_page.PAST + 1, key_valid=mask_figure.pad_valid(5, "front", 5)
    )
    assert status.inner_text() == mask_figure.explore_status(facts)
    assert page.locator(f"{PANEL} .step-figure-explore-note").is_visible()

    page.keyboard.press("Tab")
    assert focused(page).endswith("causal")
    page.keyboard.press("Space")
    assert not page.locator(f"{ID}causal").is_checked()
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert page.locator(f"{ID}wrong").is_checked()
    facts = mask_page.visibility_facts(
        1, past=mask_page.PAST + 1, key_valid=mask_figure.pad_valid(5, "front", 5), causal=False
    )
    assert status.inner_text() == mask_figure.explore_status(facts) + mask_figure.lost_status(facts)
    # The tables' own box takes focus, so a keyboard can scroll a wide table sideways.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('step-figure-explore-tables')")
    assert outline(page) == "solid 3px"


def test_the_status_announces_one_short_sentence(open_mask):
    page = open_mask()
    status = page.locator(STATUS)
    assert (
        status.get_attribute("aria-live") == "polite"
        and status.get_attribute("aria-atomic") == "true"
    )
    # The player keeps the figure's one role=status ("第k步，共n步"); the panel's region is its own.
    assert page.locator(f"{FIGURE} [role=status]").all_inner_texts() == ["第1步，共5步"]
    page.locator(f"{ID}new").select_option(label="6")
    page.get_by_label("把本批行号当位置（写错的偏移）").check()
    text = status.inner_text()
    assert len(text) < 90 and "✓" not in text and "Key 0" not in text, text
    assert page.locator(f"{PANEL} table[aria-live], {PANEL} [aria-live] table").count() == 0


def test_controls_are_labelled_native_elements(open_mask):
    page = open_mask()
    for name in ("past", "new", "pad", "count"):
        assert page.locator(f"{ID}{name}").evaluate("e => e.tagName") == "SELECT"
        assert page.locator(f"label[for='step-figure-explore-1-{name}']").count() == 1
    for name in ("causal", "wrong"):
        assert (
            page.locator(f"{ID}{name}").evaluate("e => e.tagName + ':' + e.type")
            == "INPUT:checkbox"
        )
        assert page.locator(f"label[for='step-figure-explore-1-{name}']").count() == 1


def test_narrow_screen_scrolls_the_tables_not_the_page(open_mask):
    page = open_mask(maths=True, width=360, height=800)
    width = "document.scrollingElement.scrollWidth"
    before = page.evaluate(
        width
    )  # the page's own width (its reference list may be wider than a phone)
    page.locator(f"{ID}past").select_option(label="6")
    page.locator(f"{ID}new").select_option(label="6")
    page.get_by_label("把本批行号当位置（写错的偏移）").check()
    assert page.evaluate(width) == before  # the widest state widens nothing
    panel = page.locator(f"{PANEL} .step-figure-explore-panel")
    assert panel.evaluate(
        "p => p.getBoundingClientRect().right <= window.innerWidth && p.scrollWidth <= p.clientWidth"
    )
    box = page.locator(f"{PANEL} .step-figure-explore-tables")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    box.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "s => document.querySelector(s).scrollLeft > 0", arg=f"{PANEL} .step-figure-explore-tables"
    )


def test_reduced_motion_nothing_animates(open_mask):
    page = open_mask(reduced_motion="reduce")
    page.locator(f"{ID}past").select_option(label="0")
    assert (
        page.evaluate("s => document.querySelector(s).getAnimations({subtree: true}).length", PANEL)
        == 0
    )


def test_no_panel_in_print(open_mask):
    page = open_mask()
    page.emulate_media(media="print")
    assert not page.locator(PANEL).is_visible()
    assert page.locator(f"{FIGURE} .step-figure-frame").count() == 5
    assert all(f.is_visible() for f in page.locator(f"{FIGURE} .step-figure-frame").all())


def test_no_panel_without_javascript(open_mask):
    page = open_mask(ready=False, java_script_enabled=False)
    assert page.locator(PANEL).count() == 1 and not page.locator(PANEL).is_visible()
    assert page.locator(f"{FIGURE} select, {FIGURE} input").count() == 0  # no dead control
    assert all(f.is_visible() for f in page.locator(f"{FIGURE} .step-figure-frame").all())


def test_no_serious_accessibility_violations_in_either_theme_no_request_leaves_the_book_no_error(
    open_mask, book_html
):
    page = open_mask(maths=True, theme="light")
    shown(page, [(6, 6, "end", 12, True), (0, 1, "none", 0, False)])
    assert any("/_static/step_figure_explore.js" in url for url in page.requests)
    assert_offline(page, book_html)
    assert (
        page.errors == []
    )  # before axe, whose reading of the styles from disk the browser refuses
    shown(page, [(2, 3, "front", 3, True)])  # wrong offset on, a masked row, marks in the contrast
    for scheme in ("light", "dark"):  # the theme follows the reader's setting as it changes
        set_theme(page, scheme)
        assert_axe_clean(page, PANEL, note=scheme)


def test_the_figures_own_script_and_styles_stay_small(book_html):
    static = book_html / "_static"
    sizes = {
        p.name: p.stat().st_size for p in static.glob("step_figure*") if p.suffix in {".js", ".css"}
    }
    assert set(sizes) == {
        "step_figure.js",
        "step_figure.css",
        "step_figure_explore.js",
        "step_figure_explore.css",
    }
    assert sum(sizes.values()) < 30_000, sizes


def test_screenshots(open_mask):
    """Wide and narrow pictures of the panel, for review (kept in _build/screenshots)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width, name in ((1280, "f12-explore-wide.png"), (360, "f12-explore-narrow.png")):
        page = open_mask(maths=True, width=width, height=2400)
        shown(page, [(3, 2, "front", 4, True)])
        panel = page.locator(f"{PANEL} .step-figure-explore-panel")
        panel.scroll_into_view_if_needed()
        settle(page)
        # The panel fits the screen: the page never scrolls sideways (its wide tables scroll in their
        # own box), and every control of the panel is inside the viewport.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for control in page.locator(f"{PANEL} select, {PANEL} input, {PANEL} button").all():
            box = control.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (
                width,
                box,
            )
        panel.screenshot(path=str(SHOTS / name))
