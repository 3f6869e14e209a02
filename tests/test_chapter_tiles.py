"""The tiles page's book side (book/chapter/tiles.py): its tables and facts on other inputs than the page's,
and the FlexAttention record (code/02_tiles_torch.json) recomputed in numpy.

Fast unit tests, no build. Each section takes no arguments: a section runs on other inputs by planting other
teaching constants, and a fact of the page's fixed sentences planted false must stop the build naming the
fact. The page's own numbers in the built HTML: tests/test_page_tiles.py.
"""

from __future__ import annotations

import copy
import functools
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from chapter import fmt
from chapter import tiles as page
from chapter.page import Section

att = importlib.import_module("02_attention")
tl = importlib.import_module("02_tiles")
ex = importlib.import_module("02_exercises_tiles")
SECTIONS = [page.online, page.tiles, page.count, page.guard, page.checks, page.flex]


def fails(fact: str):
    """The build stops, naming the page and the fact (the section's title in between)."""
    return pytest.raises(
        ValueError, match=rf"^{page.PAGE}「.*」的固定说法与这次算出的不符：.*{fact}"
    )


# -- the shape of the module ---------------------------------------------------------------------------------
def test_each_exercise_is_a_section():
    assert all(isinstance(s, Section) for s in page.exercises())


def test_the_page_types_the_inputs_the_sections_read():
    text = (Path(__file__).resolve().parents[1] / "book" / "ch02" / "tiles.md").read_text(
        encoding="utf-8"
    )
    for name in ("ROW_SCORES", "ROW_BLOCK", "DEMO_Q", "DEMO_K", "DEMO_PAST", "DEMO_BLOCK"):
        assert f"<02_tiles:{name}>`" in text, name
    for name in ("GUARD_WINDOW", "TOLERANCE", "TIMED_NS", "DOC_LENGTH", "RAGGED_N"):
        assert f"<chapter.tiles:{name}>`" in text, name
    for name in ("ONLINE_SCORES", "CACHE_PAST", "WINDOW", "GUARD_DOCS"):
        assert f"<02_exercises_tiles:{name}>`" in text, name


# -- one row, block by block ---------------------------------------------------------------------------
def row(mp, scores, block=2):
    """Plant another hand example (its V one column, 1, 3, 5, …)."""
    mp.setattr(tl, "ROW_SCORES", scores)
    mp.setattr(tl, "ROW_V", [[2.0 * j + 1] for j in range(len(scores))])
    mp.setattr(tl, "ROW_BLOCK", block)


def test_the_online_table_is_the_trace_of_another_row(monkeypatch):
    scores = [0.5, 2.0, -1.0, 4.0, 1.0]
    row(monkeypatch, scores)
    values = page.online().values
    rows = values["tbl_online"].rows
    trace = tl.online_row(scores, tl.ROW_V, 2)["trace"]
    assert [r[3] for r in rows] == [fmt.fmt(m) for m, _, _ in trace]
    assert [r[5] for r in rows] == [fmt.fmt(total) for _, total, _ in trace]
    assert rows[0][4] == fmt.fmt(0.0)  # before the first block m = −∞: the factor is e^(−∞) = 0
    assert rows[1][4] == fmt.fmt(math.exp(2.0 - 4.0))  # the second block raises m from 2 to 4
    assert rows[2][4] == fmt.fmt(1.0)
    assert (values["o_grew"], values["o_kept"]) == ("块 2", "块 3")
    assert values["o_out"] == values["o_one_pass"] and fmt.printed(values["o_gap"]) < 1e-12
    assert fmt.printed(values["o_wrong"]) != fmt.printed(values["o_out"])


def test_a_row_whose_maximum_never_grows_cannot_carry_the_pages_words(monkeypatch):
    row(monkeypatch, [4.0, 3.0, 2.0, 1.0])  # no block raises m
    with fails("a_block_raises_the_maximum"):
        page.online()


# -- F15 ------------------------------------------------------------------------------------------------
def test_f15_sweeps_a_full_a_partial_and_an_empty_block():
    frames = page.f15_frames()
    assert [f["condition"].split("：")[1] for f in frames] == [
        page.KIND_WORDS[k] for k in ("full", "partial", "empty")
    ]
    d = page.demo()
    for b, frame in enumerate(frames):
        (table,) = frame["tables"]
        for i, cells in zip(range(2), table["rows"]):
            m, total, o = d["traces"][i][b]
            assert [c["text"] for c in cells[-3:]] == [fmt.fmt(m), fmt.fmt(total), fmt.fmt(o[0])]
            for j, cell in enumerate(cells[1:-3]):
                if j // 2 > b:
                    assert cell["text"] == "未读"
                elif d["kinds"][0][j // 2] == "empty":
                    assert cell["text"] == "跳过"
                else:
                    assert cell["text"] == fmt.mark(d["visible"][i][j])
    assert "行 0 不能读 Key 3" in frames[1]["explanation"]
    # the skipped block changes nothing: its m, l, O are the previous frame's
    last = [[c["text"] for c in r[-3:]] for r in frames[2]["tables"][0]["rows"]]
    before = [[c["text"] for c in r[-3:]] for r in frames[1]["tables"][0]["rows"]]
    assert last == before


def test_f15_refuses_an_example_without_the_three_kinds(monkeypatch):
    demo = page.demo

    def one_kind():
        d = demo()
        return {**d, "kinds": [["full", "full", "partial"], d["kinds"][1]]}

    monkeypatch.setattr(page, "demo", one_kind)
    with fails("three_kinds"):
        page.f15_frames()


def test_the_grid_and_the_counts_after_the_figure():
    v = page.tiles().values
    rows = v["tbl_grid"].rows
    assert [r[1:] for r in rows] == [
        [page.KIND_WORDS[k] for k in row] for row in page.demo()["kinds"]
    ]
    assert (v["t_full"], v["t_partial"], v["t_empty"]) == ("3", "2", "1")
    assert fmt.printed(v["t_gap"]) < 1e-12


# -- the count ------------------------------------------------------------------------------------------
def test_the_count_table_is_t_t_plus_1_over_2_on_other_lengths(monkeypatch):
    monkeypatch.setattr(page.costs, "SCORE_NS", [512, 2048])
    monkeypatch.setattr(tl, "COUNT_BLOCK", 64)
    v = page.count().values
    for cells, n in zip(v["tbl_counts"].rows, (512, 2048)):
        t = n // 64
        assert cells[:5] == [fmt.count(n), fmt.count(t), fmt.count(t * t),
                             fmt.count(t * (t + 1) // 2), fmt.count(t)]  # fmt: skip
    assert v["c_ratios"] == "、".join(fmt.ratio(2 * t / (t + 1)) for t in (8, 32))


def test_a_length_the_block_does_not_divide_is_refused_in_the_formula_table(monkeypatch):
    monkeypatch.setattr(page.costs, "SCORE_NS", [1000])
    with fails("causal_computes_t_t_plus_1_over_2"):
        page.count()


# -- the guard, the checks --------------------------------------------------------------------------------
def test_the_guard_section_names_the_nan_rows():
    v = page.guard().values
    assert v["g_nan"] == "行 0"
    assert v["g_window_nan"] == "行 1、行 3" and v["g_lse"] == "−∞"
    assert v["g_inf_minus_inf"] == "NaN"


def test_a_wider_window_leaves_no_row_for_the_pages_nan_sentence(monkeypatch):
    monkeypatch.setattr(page, "GUARD_WINDOW", 6)  # every visible key in the window: no NaN row
    with fails("window_rows_not_fully_masked_are_nan"):
        page.guard()


def test_every_mistake_is_caught_by_a_comparison_and_none_by_the_leak_probe():
    facts = page.checks_facts()
    assert all(facts[None].values())
    for mistake in tl.MISTAKES:
        assert facts[mistake]["leak"]  # passes the probe: nothing read from the future
        assert not all(facts[mistake][c] for c in ("causal", "cache", "window")), mistake
    assert facts["row_index"]["causal"] and not facts["row_index"]["cache"]
    assert facts["no_guard"]["cache"] and not facts["no_guard"]["window"]
    rows = page.checks().values["tbl_checks"].rows
    assert rows[0][1:] == ["—"] * 4 and all(r[-1] == "—" for r in rows)


def test_a_mistake_no_check_catches_stops_the_build(monkeypatch):
    facts = page.checks_facts()
    facts["no_rescale"] = {c: True for c in page.CHECK_NAMES}
    monkeypatch.setattr(page, "checks_facts", lambda: facts)
    with fails("each_mistake_fails_one"):
        page.checks()


def test_a_leak_through_the_tiles_is_caught_by_the_probe():
    d = page.demo()
    everything = [[True] * len(tl.DEMO_K) for _ in tl.DEMO_Q]  # reads the future: not causal

    def leaky(q, k, v, visible):
        return tl.tiled_attention(q, k, v, everything, block_q=2, block_k=2)

    assert not page._leak_free(leaky, tl.DEMO_Q, tl.DEMO_K, tl.DEMO_V, d["visible"], tl.DEMO_PAST)


# -- the FlexAttention record, recomputed in numpy ----------------------------------------------------------
def numpy_blocks(case: dict) -> dict:
    """The record's blocks from the rule alone: the table padded to whole blocks with forbidden cells, as
    FlexAttention pads it, then each block summed."""
    doc_lengths = None if case["doc_lengths"] is None else tuple(case["doc_lengths"])
    inputs = (case["n_query"], case["n_key"], case["block"], case["window"], doc_lengths)
    return copy.deepcopy(_numpy_blocks(*inputs))  # the edited records below ask for the same cases


@functools.cache
def _numpy_blocks(n_query, n_key, b, window, doc_lengths) -> dict:
    p = (n_key - n_query) + np.arange(n_query)[:, None]
    k = np.arange(n_key)[None, :]
    table = k <= p
    if window is not None:
        table &= k > p - window
    if doc_lengths is not None:
        doc = np.repeat(np.arange(len(doc_lengths)), doc_lengths)
        table &= doc[k] == doc[p]
    tq = -(-n_query // b)
    tk = -(-n_key // b)
    padded = np.zeros((tq * b, tk * b), dtype=bool)
    padded[:n_query, :n_key] = table
    sums = padded.reshape(tq, b, tk, b).sum(axis=(1, 3))
    kinds = np.array(tl.block_kinds(table.tolist(), b, b))
    flex_kinds = np.where(sums == b * b, "full", np.where(sums > 0, "partial", "empty"))
    return {
        "flex": {
            "partial": ((sums > 0) & (sums < b * b)).sum(1).tolist(),
            "full": (sums == b * b).sum(1).tolist(),
        },
        "ours": {
            "partial": (kinds == "partial").sum(1).tolist(),
            "full": (kinds == "full").sum(1).tolist(),
        },  # fmt: skip
        "sparsity": 100 * (1 - (sums > 0).sum() * b * b / (n_query * n_key)),
        "differ": np.argwhere(flex_kinds != kinds).tolist(),  # (query block, key block), in order
    }


def check_tiles_record(record: dict) -> None:
    """Every claim of the record against numpy, the pure-Python tiles and the pins."""
    for name, case in record["blocks"].items():
        want = numpy_blocks(case)
        assert {k: case["flex"][k] for k in ("partial", "full")} == want["flex"], name
        assert case["ours"] == want["ours"], name
        assert case["differ"] == want["differ"], name
        assert case["same"] == (want["differ"] == []), name
        assert math.isclose(case["flex"]["sparsity"], want["sparsity"], abs_tol=1e-6), name
        assert case["flex"]["block_size"] == [case["block"]] * 2, name
    cache = record["blocks"]["cache"]  # the page's figure: its example and its blocks
    assert (cache["n_query"], cache["n_key"], cache["block"]) == (
        len(tl.DEMO_Q),
        len(tl.DEMO_K),
        tl.DEMO_BLOCK,
    )
    a = record["attention"]
    assert a["empty_rows"] == [] and max(a["gap"], a["lse_gap"]) < page.TOLERANCE
    e = record["empty_rows"]
    valid = [False, False, True, True, True, True]  # 02_tiles_torch.EMPTY_VALID: two left PADs
    visible = att.visibility(len(tl.DEMO_K), len(tl.DEMO_K), key_valid=valid)
    assert e["empty_rows"] == [i for i, row in enumerate(visible) if not any(row)]
    assert e["output_on_empty_rows"] == [[0.0]] * len(e["empty_rows"])
    assert e["lse_on_empty_rows"] == ["-inf"] * len(e["empty_rows"])
    assert max(e["gap"], e["lse_gap"]) < page.TOLERANCE
    pins = dict(
        line.split("#")[0].strip().split("==")
        for line in (page.TORCH_RECORD.parents[1] / "tests" / "crosscheck" / "requirements.txt")
        .read_text(encoding="utf-8")
        .splitlines()
        if "==" in line.split("#")[0]
    )
    assert record["torch"].split("+")[0] == pins["torch"]
    assert (record["device"], record["dtype"]) == ("cpu", "float64")


def test_the_flexattention_record_is_numpys_answer():
    check_tiles_record(page.torch_record())


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["blocks"]["causal"]["flex"]["full"].__setitem__(0, 1),
        lambda r: r["blocks"]["ragged"]["flex"]["partial"].__setitem__(-1, 1),
        lambda r: r["blocks"]["window"].update(same=False),
        lambda r: r["blocks"]["ragged"]["differ"].pop(),
        lambda r: r["blocks"]["documents"]["flex"].update(sparsity=50.0),
        lambda r: r["attention"].update(gap=0.5),
        lambda r: r["empty_rows"].update(lse_on_empty_rows=["nan", "nan"]),
        lambda r: r["empty_rows"]["output_on_empty_rows"][0].__setitem__(0, float("nan")),
        lambda r: r.update(torch="2.0.0"),
    ],
)
def test_an_edited_flexattention_record_fails(edit):
    record = copy.deepcopy(page.torch_record())
    edit(record)
    with pytest.raises(AssertionError):
        check_tiles_record(record)


def test_the_flexattention_section_reads_the_record():
    v = page.flex().values
    assert v["x_where"] == "PyTorch 2.13.0+cpu，CPU，float64"
    assert (v["x_causal_sparsity"], v["x_ragged_sparsity"], v["x_ragged_share"]) == (
        "43.75%",
        "41.02%",
        "43.75%",
    )
    assert (v["x_ragged_last_partial"], v["x_ragged_ours_full"]) == ("8", "7")
    rows = v["tbl_flex"].rows
    assert [r[6] for r in rows] == ["相同"] * 4 + ["不同"]


@pytest.mark.parametrize(
    "edit, fact",
    [
        (lambda r: r["blocks"]["window"].update(same=False), "only_the_ragged_case_differs"),
        (
            lambda r: r["blocks"]["ragged"]["differ"].clear(),
            "ragged_differs_in_the_last_query_block",
        ),
        (
            lambda r: r["empty_rows"].update(lse_on_empty_rows=["inf", "inf"]),
            "empty_rows_zero_with_minus_inf_logsumexp",
        ),
        (lambda r: r["attention"].update(warnings=[]), "flex_attention_unfused"),
    ],
)
def test_a_record_that_contradicts_the_page_stops_the_build(monkeypatch, edit, fact):
    record = copy.deepcopy(page.torch_record())
    edit(record)
    monkeypatch.setattr(page, "torch_record", lambda: record)
    with fails(fact):
        page.flex()


# -- the exercises -------------------------------------------------------------------------------------------
def test_the_exercise_values_are_the_answers():
    v = {name: x for s in page.exercises() for name, x in s.values.items()}
    assert [r[2] for r in v["x1_table"].rows] == [fmt.fmt(m) for m, _ in ex.online_trace()["trace"]]
    assert (v["x2_computed"], v["x2_blocks"]) == ("8", "9")
    assert v["x3_per_block"] == str(ex.WINDOW // ex.WINDOW_BLOCK + 1)
    assert v["x4_rows"] == "行 3"


def test_an_exercise_whose_answer_contradicts_its_solution_stops_the_build(monkeypatch):
    answer = ex.packed_guard()
    monkeypatch.setattr(ex, "packed_guard", lambda: {**answer, "rows": []})  # no row left to guard
    with fails("only_the_second_documents_first_row"):
        page.guard_exercise()
