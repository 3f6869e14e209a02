"""The PDF edition: built once with XeLaTeX, then read back as text, fonts and LaTeX log.

The build goes to _build/test-latex (or ``$BOOK_TEST_BUILD-latex``) and the first pages are
rendered to PNG under _build/pdf-pages/ for a person to look at.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import texcheck
from conftest import BUILD, MASK_SECTIONS, ROOT, assert_numbered_sections, flat

pytestmark = pytest.mark.pdf

PAGES_DIR = BUILD / "pdf-pages"
REVIEW_PAGES = 12  # title, 目录, 前言, the chapter opening, F12 and the first listings


def headings(page: str, level: int) -> list[str]:
    marks = "#" * level
    text = (ROOT / "book" / page).read_text(encoding="utf-8")
    return re.findall(rf"^{marks} (.+)$", text, flags=re.M)


def test_title_page_has_title_author_and_date(pages):
    conf = (ROOT / "conf.py").read_text(encoding="utf-8")
    title = re.search(r'^project = "(.+)"$', conf, re.M).group(1)  # the landing page itself is 前言
    author = re.search(r'^author = "(.+)"$', conf, re.M).group(1)
    first = flat(pages[0])
    assert flat(title) in first
    assert flat(author) in first
    assert re.search(r"\d{4}年\d{1,2}月\d{1,2}日", first), pages[0]


def test_chrome_is_chinese(text):
    assert "目录" in text
    assert "第2章" in text
    for english in ("CHAPTER", "Chapter", "Contents", "CONTENTS", "Author name not set", "Release"):
        assert english not in text


def test_the_chapter_is_number_2_and_the_mask_page_is_its_section(pages, text):
    chapter = headings("ch02/index.md", 1)[0]
    opening = [p for p in pages if flat(f"第2章{chapter}") in flat(p) and "目录" not in p]
    assert opening, "no page opens 第2章"
    assert "第1章" not in text
    mask_title = headings("ch02/mask.md", 1)[0]
    section = re.search(rf"2\.(\d+){re.escape(flat(mask_title))}", text)
    assert section, "the mask page is not a section of 第2章"


def test_mask_sections_are_numbered_in_order(text):
    assert headings("ch02/mask.md", 2) == MASK_SECTIONS
    assert_numbered_sections(text, headings("ch02/mask.md", 1)[0], MASK_SECTIONS)


def test_preface_is_the_landing_page_prose_before_chapter_2(pages):
    prose = (ROOT / "book" / "index.md").read_text(encoding="utf-8")
    first_sentence = re.search(r"^([^#%`:\n-][^。\n]*。)", prose, re.M).group(1)
    where = [i for i, p in enumerate(pages) if flat(first_sentence) in flat(p)]
    assert len(where) == 1, where
    assert "前言" in pages[where[0]]
    chapter_2 = next(i for i, p in enumerate(pages) if "第2章" in flat(p) and "目录" not in p)
    assert where[0] < chapter_2


def test_softmax_numbers_come_from_the_code(text):
    att = importlib.import_module("02_attention")
    for p in att.softmax([0, 1, 2]):
        assert f"{p:.4f}" in text


def test_run_output_is_printed_with_its_chinese_keys(text):
    run = subprocess.run(
        [sys.executable, str(ROOT / "code" / "02_attention.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    demo = json.loads(run.stdout)
    for key in demo:
        assert flat(json.dumps(key, ensure_ascii=False) + ":") in text, key
    assert json.dumps(demo["softmax_0_1_2"][0]) in text


def test_f12_frames_have_their_captions_in_order(text):
    # Figure F12 renders its five frames as static tables, each under a bold 「k / 5 · …」 caption
    # whose condition comes from the frames function.
    frames = importlib.import_module("chapter.mask_figure").f12_frames()
    where = [
        text.find(flat(f"{k} / {len(frames)} · {frame['condition']}"))
        for k, frame in enumerate(frames, 1)
    ]
    assert -1 not in where, where
    assert where == sorted(where)


def test_every_font_is_embedded_and_the_cjk_fonts_are_noto(pdf):
    out = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout
    # Columns: name, type, encoding, emb, sub, uni, object ID (two numbers). Long names push the
    # columns right, so count from the end of each row.
    rows = [row.split() for row in out.splitlines()[2:]]
    assert rows
    assert [row[0] for row in rows if row[-5] != "yes"] == []
    names = " ".join(row[0] for row in rows)
    for family in ("NotoSerifCJK", "NotoSansCJK", "FreeSerif"):
        assert family in names, names


def test_latex_log_has_no_missing_glyph_or_undefined_reference(pdf):
    assert texcheck.log_problems(pdf.parent) == []


def test_latex_log_has_no_warning_at_all(pdf):
    # Beyond glyphs and references: no substituted font shape, no bad PDF string, no package gripe.
    log = pdf.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    assert re.findall(r"^.*Warning.*$", log, flags=re.M) == []


def test_nothing_runs_into_the_margin(pdf):
    # Code wraps and tables fit: an overfull line would stick out to the right of the text.
    log = pdf.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    assert re.findall(r"Overfull \\hbox.*", log) == []


def test_first_pages_render_for_review(pdf):
    shutil.rmtree(PAGES_DIR, ignore_errors=True)
    PAGES_DIR.mkdir(parents=True)
    cmd = [
        "pdftoppm",
        "-png",
        "-r",
        "80",
        "-l",
        str(REVIEW_PAGES),
        str(pdf),
        str(PAGES_DIR / "page"),
    ]
    subprocess.run(cmd, check=True)
    assert len(list(PAGES_DIR.glob("page-*.png"))) == REVIEW_PAGES


# -- a chapter a learner can carry: each page of chapter 2 fits its budget of PDF pages --------------
PAGE_BUDGET = 20  # PDF pages for every page of the chapter after its opening (each mechanism page)
CHAPTER_BUDGET = 120  # the opening and the six mechanism pages below, together
MECHANISM_PAGES = ["mask", "scaling", "multihead", "rope", "backprop", "costs"]
TOC_ENTRY = re.compile(
    r"^\\contentsline \{(chapter|section)\}\{(?:\\numberline \{([^}]*)\})?(.*)\}\{(\d+)\}\{[^{}]*\}%$",
    re.M,
)


def toc_spans(toc: str) -> list[tuple[str, str, int]]:
    """The chapters and sections of LaTeX's table of contents as (number, title, PDF pages it spans).

    An entry runs from its first page to the first page of the next chapter or section, so the page where
    one section ends and the next begins counts once, for the first; a blank page before a chapter that
    opens on a right-hand page counts for the section before it (the budget is stricter, not looser).
    """
    entries = [
        (number, re.sub(r"\\([_&%$#{}])", r"\1", title), int(page))
        for _, number, title, page in TOC_ENTRY.findall(toc)
    ]
    return [
        (number, title, after[2] - page)
        for (number, title, page), after in zip(entries, entries[1:])
    ]


def test_toc_spans_count_the_pages_up_to_the_next_entry():
    toc = "\n".join(
        [
            r"\contentsline {chapter}{\numberline {2}章}{3}{chapter.2}%",
            r"\contentsline {section}{\numberline {2.1}开头}{3}{section.2.1}%",
            r"\contentsline {subsection}{\numberline {2.1.1}小节}{4}{subsection.2.1.1}%",
            r"\contentsline {section}{\numberline {2.2}Mask 与 a\_b}{4}{section.2.2}%",
            r"\contentsline {chapter}{\numberline {A}附录}{25}{appendix.A}%",
        ]
    )
    assert toc_spans(toc) == [("2", "章", 0), ("2.1", "开头", 1), ("2.2", "Mask 与 a_b", 21)]


def chapter_2_spans(pdf: Path) -> dict[str, int]:
    """The PDF pages of chapter 2's own opening text and of each of its sections 2.N, by title."""
    spans = toc_spans(pdf.with_suffix(".toc").read_text(encoding="utf-8"))
    return {
        flat(title): pages for number, title, pages in spans if re.fullmatch(r"2(\.\d+)?", number)
    }


def opening_titles() -> list[str]:
    """The chapter opening (ch02/index.md) in the PDF: the chapter's title and the sections of that page."""
    return [
        flat(title) for title in headings("ch02/index.md", 1)[:1] + headings("ch02/index.md", 2)
    ]


def test_every_page_of_chapter_2_after_its_opening_fits_in_20_pdf_pages(pdf):
    spans = chapter_2_spans(pdf)
    pages = {title: n for title, n in spans.items() if title not in opening_titles()}
    assert len(pages) >= len(MECHANISM_PAGES), spans
    # Every page the chapter has or will have (training, tensors …), not only the six listed here.
    assert {title: n for title, n in pages.items() if n > PAGE_BUDGET} == {}, pages


def test_the_chapter_opening_and_its_six_mechanism_pages_fit_in_120_pdf_pages(pdf):
    spans = chapter_2_spans(pdf)
    titles = opening_titles() + [
        flat(headings(f"ch02/{page}.md", 1)[0]) for page in MECHANISM_PAGES
    ]
    assert [t for t in titles if t not in spans] == [], spans
    counted = {title: spans[title] for title in titles}
    assert sum(counted.values()) <= CHAPTER_BUDGET, counted
