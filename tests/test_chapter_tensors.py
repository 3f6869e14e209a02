"""The tensors page's book side (book/chapter/tensors.py): its tables and facts on other inputs than the page's.

Fast unit tests, no build. Each section takes no arguments and reads its inputs from the teaching files'
constants (and the book side's own, for the inputs no teaching file has): a test runs it on other inputs by
planting other constants, and a fact of the page's fixed sentences planted false must stop the build naming
the fact. The page's own numbers are checked in tests/test_page_tensors.py.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import inspect
import json

import numpy as np
import pytest

from chapter import conventions, fmt
from chapter import tensors as page

tn = importlib.import_module("02_tensors")
SECTIONS = [
    page.batch,
    page.rules,
    page.dtype,
    page.window,
    page.packing,
    page.libraries,
    page.torch_section,
    page.run_output,
    page.exercises,
]


def test_the_sections_glue_each_name_once():
    names = []
    for section in SECTIONS:
        names += list(section().values)
    assert len(names) == len(set(names))


def other_batch(seed: int = 5) -> dict:
    """Another batch than the page's: three sequences, right and left PAD, one K/V head for three query heads."""
    rng = np.random.default_rng(seed)
    mask = np.array([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 1, 1]])

    def draw(*shape):
        return np.round(rng.uniform(-1, 1, shape), 1)

    return {
        "attention_mask": mask,
        "past": 3,
        "q": draw(3, 3, 2, 4),
        "k": draw(3, 1, 5, 4),
        "v": draw(3, 1, 5, 2),
    }


def test_the_batch_tables_and_sentence_on_another_batch(monkeypatch):
    monkeypatch.setattr(tn, "demo_inputs", other_batch)
    v = page.batch().values
    rows = v["tbl_b_diffs"].rows
    assert len(rows) == 9 and {r[2] for r in rows} == {"K/V 头 0"}
    diffs = [fmt.printed(c) for r in rows for c in r[3:]]
    assert max(diffs) < 1e-12
    assert (v["b_pairs"], v["b_rows"], v["b_worst"]) == ("9", "18", fmt.difference(max(diffs)))
    assert v["b_exact"] == str(sum(d == 0.0 for d in diffs))
    assert [r[3] for r in v["tbl_b_positions"].rows] == ["相同"] * 3
    assert [r[1] for r in v["tbl_b_groups"].rows] == ["K/V 头 0"] * 3
    # the visible keys of the third sequence's new queries: its three PADs are never read
    third = [r for r in v["tbl_b_visible"].rows if r[0] == "序列 2"]
    assert [r[2:5] for r in third] == [
        ["3", "0", "3"],
        ["4", "1", "3、4"],
    ]  # 绝对位置, 位置编号, keys


@pytest.mark.parametrize(
    "plant, fact",
    [
        # the page says every row agrees: a batched result off by 10⁻³ must not be printed as agreeing
        (lambda r: {**r, "outputs": r["outputs"] + 1e-3}, "every_row_matches_pure_python"),
        # the figure draws one table per sequence, 「4 个头共用」: heads with different tables stop it
        (
            lambda r: {**r, "visible": r["visible"] & (np.arange(4) == 0)[:, None, None]},
            "heads_share",
        ),
    ],
)
def test_a_batch_that_no_longer_bears_out_its_sentences_stops_the_build(monkeypatch, plant, fact):
    forward = tn.forward
    monkeypatch.setattr(tn, "forward", lambda x: plant(forward(x)))
    with pytest.raises(ValueError, match=f"张量一页「一批数据，从头到尾」.*{fact}"):
        page.batch()


@pytest.mark.parametrize("mask, both", [([[1, 1, 0]], 2), ([[0, 1, 1]], 0), ([[1, 0, 0, 0]], 6)])
def test_the_fill_counts_and_sentence_on_other_batches(monkeypatch, mask, both):
    n = len(mask[0])
    expected = sum(
        k > q and mask[0][k] == 0 for q in range(n) for k in range(n)
    )  # future PAD: both rules
    assert expected == both
    counts = {t: page.fill_counts(mask, t, (-10.0, -20.0)) for t in tn.FLOAT_DTYPES}
    assert all(c["both"] == c["summed_inf"] == both and c["once_inf"] == 0 for c in counts.values())
    empty = sum(
        all(k > q or mask[0][k] == 0 for k in range(n)) for q in range(n)
    )  # no key both earlier and content
    assert {c["empty_rows"] for c in counts.values()} == {empty}
    if both == 0 or empty == 0:
        # the page's sentences need both: −∞ where the masks add, and empty rows
        monkeypatch.setattr(tn, "DEMO_MASK", mask)
        with pytest.raises(ValueError, match="张量一页「两张加性 mask 相加：溢出成 −∞」"):
            page.dtype()


def test_the_left_padded_batch_has_nan_rows_in_float16_only_and_the_score_did_it(monkeypatch):
    monkeypatch.setattr(tn, "DEMO_MASK", [[0, 0, 0, 1, 1], [1, 1, 1, 1, 1]])
    monkeypatch.setattr(page, "SCORE_LOW", -8.0)
    monkeypatch.setattr(page, "SCORE_HIGH", -40.0)
    v = page.dtype().values
    rows = {r[0]: r for r in v["tbl_fill"].rows}
    assert v["f_empty"] == "3" and rows["float16"][4:] == ["0 / 0", "3 / 3"]
    assert rows["float32"][4:] == rows["float64"][4:] == ["0 / 0", "0 / 0"]
    assert v["tbl_fill"].header[4:] == [
        "分数 −8 时 NaN 的行（相加 / 填一次）",
        "分数 −40 时 NaN 的行（相加 / 填一次）",
    ]
    assert (v["f_both"], v["f_types"], v["f_nan_types"]) == (
        "3",
        "float16、float32、float64",
        "float16",
    )
    monkeypatch.setattr(page, "SCORE_HIGH", -9.0)  # a score that overflows nowhere
    with pytest.raises(ValueError, match="nan_at_high_score"):
        page.dtype()


def test_the_float16_overflow_threshold_is_where_the_sum_first_is_minus_infinity():
    s = page.overflow_threshold("float16")
    with np.errstate(over="ignore"):
        assert np.isneginf(np.float16(np.finfo(np.float16).min) - np.float16(s))
        assert not np.isneginf(np.float16(np.finfo(np.float16).min) - np.float16(s - 1))
    assert page.overflow_threshold("float32") == 0


def test_the_rules_table_is_the_predicates_on_another_sequence(monkeypatch):
    doc_ids = [0, 0, 1, 1, 1, 2, 2]
    for name, value in dict(N=7, W=2, PREFIX=3, SINK=2, DOCS=doc_ids).items():
        monkeypatch.setattr(page, f"RULES_{name}", value)
    v = page.rules().values
    header, rows = v["tbl_rules"]
    rules = page.rules_of(7, 2, 3, 2, doc_ids)
    assert header[1:] == list(rules)
    for i in range(7):
        for c, (rule, _) in enumerate(rules.values(), start=1):
            keys = [k for k in range(7) if bool(rule(0, 0, i, k))]
            assert rows[i][c] == ("、".join(map(str, keys)) or "无")
    assert rows[-1][1:] == ["7", "2", "2", "7", "4"] and v["r_sink_cache"] == "4"


def test_the_packing_table_bears_out_the_pages_sentence_on_another_packing(monkeypatch):
    monkeypatch.setattr(page, "PACK_DOCS", [0, 0, 1, 1, 1])
    monkeypatch.setattr(page, "PACK_SEED", 7)
    rows = page.packing().values["tbl_packing"].rows
    gaps = {(r[0], r[1]): (fmt.printed(r[2]), fmt.printed(r[3])) for r in rows}
    assert gaps["有", "重新从 0 数"] == (0.0, 0.0)
    assert (
        gaps["有", "接着数"][0] < 1e-12 < gaps["有", "接着数"][1]
    )  # RoPE: shift harmless; absolute: not
    assert min(gaps["没有", "接着数"] + gaps["没有", "重新从 0 数"]) > 1e-3
    # a packing where the documents do not see each other anyway: the page's sentence would be false
    monkeypatch.setattr(page.tn, "causal", lambda b, h, q, k: (q == k) | (k < 0))
    with pytest.raises(ValueError, match="no_doc_mask_reads_earlier_document"):
        page.packing()


def test_the_window_check_catches_the_off_by_one(monkeypatch):
    monkeypatch.setattr(page, "WINDOW_N", 8)
    monkeypatch.setattr(page, "WINDOW_W", 2)
    monkeypatch.setattr(page, "WINDOW_SEED", 4)
    rows = page.window().values["tbl_window"].rows
    assert [r[1:3] for r in rows] == [
        ["2", "8"],
        ["3", "2"],
    ]  # the first w rows agree, the rest do not
    assert rows[0][3] == "0" and fmt.printed(rows[1][3]) > 0


def observing(monkeypatch, seen: dict) -> None:
    """The sections read ``seen`` as the recorded observations."""
    monkeypatch.setattr(conventions, "observed", lambda: seen)


def test_the_library_cells_read_the_observations(monkeypatch):
    real = page.libraries().values
    assert (real["lib_sdpa_true"], real["lib_causal"]) == ("True = 允许", "左上对齐")
    real_t = page.torch_section().values
    assert real_t["t_mha_kpm"] == "True = 禁止"
    assert (real_t["t_mha_fast_weights_empty"], real_t["t_mha_fast_no_weights_empty"]) == (
        "NaN",
        "NaN",
    )
    real_f = page.dtype().values
    assert (real_f["f_sdpa_empty"], real_f["f_sdpa_finfo_min"]) == (
        "全 0",
        "像没有 mask 一样按分数读所有 Key",
    )
    seen = copy.deepcopy(conventions.observed())
    torch = seen["cpu"]["torch"]
    torch["sdpa"]["bool_true"] = "forbidden"
    torch["sdpa"]["is_causal"] = "bottom-right"
    torch["version"] = "9.9"
    torch["mha"]["key_padding_mask_true"] = "allowed"
    torch["sdpa_fully_masked"]["default"]["float16"] |= {"bool": "nan", "float": "nan"}
    torch["sdpa_fully_masked_finfo_min"]["float16"]["float"] = "zeros"
    torch["mha_fast_path"]["fully_masked"]["float64"]["no_weights"] = "zeros"
    observing(monkeypatch, seen)
    v = page.libraries().values
    t = page.torch_section().values
    assert (v["lib_sdpa_true"], v["lib_causal"], v["lib_torch"]) == (
        "True = 禁止",
        "右下对齐",
        "PyTorch 9.9，CPU",
    )
    assert t["t_mha_kpm"] == "True = 允许"  # exercise 5 reads these too
    f = page.dtype().values
    assert (f["f_sdpa_empty"], f["f_sdpa_finfo_min"]) == ("NaN", "全 0")
    assert (t["t_mha_fast_weights_empty"], t["t_mha_fast_no_weights_empty"]) == ("NaN", "全 0")


def test_the_dtype_sentence_stops_the_build_when_its_mask_forms_part(monkeypatch):
    # 「mask 是布尔的或 −∞ 的浮点表时给出…」 names both forms at once: they must give the same row.
    seen = copy.deepcopy(conventions.observed())
    seen["cpu"]["torch"]["sdpa_fully_masked"]["default"]["float16"]["float"] = "nan"
    observing(monkeypatch, seen)
    with pytest.raises(ValueError, match="sdpa_bool_and_inf_masks_agree"):
        page.dtype()


def test_the_library_exercise_table_is_the_masks_row_by_row():
    x = page.exercises().values
    rows = x["x5_table"].rows
    assert [r[3] for r in rows] == [
        "1、2",
        "1、2、3",
        "0、1、2",
        "0、1、2、3",
    ]  # bottom-right, PAD 0 cut
    assert [r[4] for r in rows] == ["0", "0、1", "0", "0、1"] and {r[5] for r in rows} == {"错"}
    assert x["x5_kpm"].rows[0] == ["序列 0", "True、False、False、False"]
    assert x["x5_wrong"] == "序列 0：查询 0、查询 1；序列 1：查询 0、查询 1"


def test_the_figures_are_drawn_from_the_tables():
    from chapter import tensors_figures as figures

    assert figures.top_left(2, 6).sum(-1).tolist() == [1, 2]
    fig = figures.alignment_figure(3, 5)
    assert [ax.get_title() for ax in fig.axes][1].startswith("右下对齐")
    x = tn.demo_inputs()
    visible = tn.forward(x)["visible"]
    labels = [
        t.get_text()
        for t in figures.batch_figure(visible, x["attention_mask"]).axes[0].get_xticklabels()
    ]
    assert labels[:3] == ["0\nPAD", "1\nPAD", "2"]


def test_the_exercise_values_are_the_answers():
    v = page.exercises().values
    assert v["x1_cache"] == "4"
    assert v["x2_table"].rows[0][2:] == ["0、0、0、0、1", "2"]
    assert v["x3_table"].rows == [
        ["左侧 PAD", "0、0、1、1", "查询 0、查询 1", "查询 0、查询 1"],
        ["右侧 PAD", "1、1、0、0", "无", "无"],
    ]
    assert v["x4_doctest"].startswith("```pycon\n>>> window_counts(5, 2)")


def test_the_position_exercise_stops_the_build_when_the_wrong_sequences_are_not_the_padded(
    monkeypatch,
):
    # 「会错的是有 PAD 的序列」: a batch whose new token lands right although it has PAD would be false
    decode = page.ex.decode_positions
    monkeypatch.setattr(page.ex, "decode_positions", lambda: {**decode(), "next": [5, 5, 5]})
    with pytest.raises(ValueError, match="wrong_are_the_padded_sequences"):
        page.exercises()


def test_the_reader_may_word_the_bad_input_message():
    # Exercise 2.9.4 lets the reader write the reason: its doctest compares the exception's type only.
    # The glued prompt carries the directive (Sphinx trims doctest flags from the shown block, so the
    # page's sentence tells the reader to add it).
    raising = [
        e
        for e in doctest.DocTestParser().get_examples(inspect.getdoc(ex.window_counts))
        if e.exc_msg is not None
    ]
    assert raising and all(e.options.get(doctest.IGNORE_EXCEPTION_DETAIL) for e in raising)
    assert "IGNORE_EXCEPTION_DETAIL" in page.exercises().values["x4_doctest"]


# -- code/02_tensors_torch.json: what make crosscheck recorded, checked against numpy's own answers ----------------
ex = importlib.import_module("02_exercises_tensors")
ROOT = conventions.OBSERVED_FILE.parents[1]


def _numpy_answers(mask, past: int) -> dict:
    """What the record must say for a batch, recomputed here from the visibility rules alone."""
    a = ex.library_masks(mask, past)  # the SDPA table, the key_padding_mask, is_causal's wrong rows
    visible = a["attn_mask"]
    batch, n_key = np.shape(mask)
    n_query = n_key - past
    causal = tn.visibility_batch(tn.causal, 1, 1, n_query, n_key)[
        0, 0
    ]  # causal_lower_right: bottom-right only
    lower = [np.flatnonzero((causal != visible[b, 0]).any(-1)).tolist() for b in range(batch)]
    empty = int((~visible.any(-1)).sum())
    sdpa = conventions.observed()["cpu"]["torch"]["sdpa_fully_masked"]["default"]["float64"]["bool"]
    return {
        "mask": visible.astype(int).tolist(),
        "mask_equal": True,
        "key_padding_mask": a["key_padding_mask"].astype(int).tolist(),
        "mha_attn_mask": (~causal).astype(int).tolist(),
        "empty_rows": empty,
        "sdpa_on_empty_rows": sdpa if empty else "none",
        "wrong_rows": {
            "is_causal": a["wrong"],
            "causal_lower_right": lower,
            "attn_mask": [[]] * batch,
        },
    }


def check_torch_record(record: dict) -> None:
    """Every claim of the record against numpy, the conventions record and the pins."""
    x = tn.demo_inputs()
    for name, past in (("batch", x["past"]), ("prefill", 0)):
        seen = {key: value for key, value in record[name].items() if not key.endswith("_gap")}
        assert seen == _numpy_answers(x["attention_mask"], past), name
        assert max(record[name]["sdpa_gap"], record[name]["mha_gap"]) < page.TOLERANCE, name
    assert (
        record["hf_mask"] == record["batch"]["mask"]
        and record["hf_equal"]
        and record["hf_eager_equal"]
    )
    assert record["hf_eager_fill"] == [float(np.finfo(np.float16).min), 0.0]
    pins = dict(
        line.split("#")[0].strip().split("==")
        for line in (ROOT / "tests" / "crosscheck" / "requirements.txt")
        .read_text(encoding="utf-8")
        .splitlines()
        if "==" in line.split("#")[0]
    )
    assert record["torch"] == conventions.observed()["cpu"]["torch"]["version"]
    assert (
        record["torch"].split("+")[0] == pins["torch"]
        and record["transformers"] == pins["transformers"]
    )
    assert (record["device"], record["dtype"]) == ("cpu", "float64")


def test_the_pytorch_record_is_numpys_answer():
    check_torch_record(page.torch_record())


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["batch"]["wrong_rows"]["is_causal"][1].pop(),
        lambda r: r["batch"]["wrong_rows"].update(causal_lower_right=[[0, 1], [0]]),
        lambda r: r["batch"]["mask"][0][0][0].__setitem__(0, 1),
        lambda r: r["prefill"].update(empty_rows=0),
        lambda r: r["prefill"].update(sdpa_on_empty_rows="nan"),
        lambda r: r.update(hf_mask=r["prefill"]["mask"]),
        lambda r: r["batch"].update(sdpa_gap=0.5),
        lambda r: r.update(transformers="4.0.0"),
    ],
)
def test_an_edited_pytorch_record_fails(edit):
    record = copy.deepcopy(page.torch_record())
    edit(record)
    with pytest.raises(AssertionError):
        check_torch_record(record)


def test_the_pytorch_section_reads_the_record(monkeypatch):
    v = page.torch_section().values
    assert v["t_where"] == "PyTorch 2.13.0+cpu、Transformers 5.17.0，CPU，float64"
    assert v["t_wrong_causal"] == "序列 0：查询 0、查询 1；序列 1：查询 0、查询 1"
    assert (
        v["t_wrong_lower"] == "序列 0：查询 0、查询 1；序列 1：无"
        and v["t_wrong_mask"] == "序列 0：无；序列 1：无"
    )
    assert (v["t_prefill_empty"], v["t_prefill_gave"]) == ("2", "全 0")
    assert (v["t_mha_weights_empty"], v["t_mha_no_weights_empty"]) == ("NaN", "全 0")
    assert (v["t_mha_kpm"], v["t_mha_attn"]) == ("True = 禁止", "True = 禁止")
    assert fmt.printed(v["t_sdpa_gap"]) < 1e-12 and v["t_eager_fill"] == "−65504、0"
    other = copy.deepcopy(page.torch_record())
    other["batch"]["wrong_rows"]["is_causal"] = [[1], []]
    monkeypatch.setattr(page, "torch_record", lambda: other)
    w = page.torch_section().values
    assert w["t_wrong_causal"] == "序列 0：查询 1；序列 1：无"
    shown = json.loads(w["t_record"].removeprefix("```json\n").removesuffix("\n```"))
    assert shown == other


@pytest.mark.parametrize(
    "edit, fact",
    [
        (lambda r, seen: r.update(hf_equal=False), "hf_sdpa_mask_is_the_table"),
        (lambda r, seen: r["batch"].update(mask_equal=False), "hf_sdpa_mask_is_the_table"),
        (lambda r, seen: r.update(hf_eager_equal=False), "eager_zeros_are_the_table"),
        (lambda r, seen: r["prefill"].update(mha_gap=0.5), "gaps_at_rounding_level"),
        (
            lambda r, seen: seen["cpu"]["torch"]["mha_fully_masked"]["float64"].update(
                weights="zeros"
            ),
            "mha_weights_nan_on_empty_rows",
        ),
        (
            lambda r, seen: seen["cpu"]["torch"]["mha_fast_path"]["fully_masked"]["float64"].update(
                weights_fast_path=False
            ),
            "mha_fast_path_taken",
        ),
    ],
)
def test_a_record_that_no_longer_bears_out_a_fixed_sentence_stops_the_build(
    monkeypatch, edit, fact
):
    record = copy.deepcopy(page.torch_record())
    seen = copy.deepcopy(conventions.observed())
    edit(record, seen)
    monkeypatch.setattr(page, "torch_record", lambda: record)
    observing(monkeypatch, seen)
    with pytest.raises(ValueError, match=f"张量一页「同一批交给 PyTorch 与 Hugging Face」.*{fact}"):
        page.torch_section()
