"""第2章图解的数据：动态图解 F12“可见性表播放器”的五帧，全部由 ``02_attention.py`` 算出。

书页上的 ``step-figure`` 指令在构建时调用这里的函数，把返回的数据排成表格和说明。
这里只返回普通数据（字典、列表、字符串、布尔值），不含任何排版代码，所以同一份数据
既能变成网页上的播放器，也能变成 PDF 里按顺序排开的五张静态表。教学代码一改，
下次构建时图里的表、规则和数都跟着变。所用输入都是人工构造的小例子。

每一帧是一个字典：

- ``condition``：这一帧的条件，图注写成“k / 5 · 条件”；
- ``tables``：若干张表，每张有 ``title``、``header`` 和 ``rows``；
  每个格子是 ``{"text": 文字, "state": "allowed" / "forbidden" / None, "highlight": 是否当前行}``；
- ``rule``：当前行的规则；``explanation``：一段说明。

直接运行 ``python3 code/02_figures.py`` 会以 JSON 打印这五帧。
"""

from __future__ import annotations

from book_tools import fmt, load, mark, short

att = load("02_attention")

# 第1—3帧：三个有效位置，没有缓存，没有 PAD，因果规则。
N_POSITIONS = 3
# 第4帧：位置1这一行的原始分数（人工给定的输入，不来自其他例子），对照加与不加 mask。
SCORE_ROW = [0.0, 1.0, 2.0]
SCORE_QUERY = 1
# 第5帧：缓存里已有 past 个位置，新来 new 个查询。
PAST, NEW = 3, 2


def _cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    return {"text": text, "state": state, "highlight": highlight}


def _flag(flag: bool, highlight: bool = False) -> dict:
    # 符号和文字一起写（mark），颜色只靠 state 附加，含义从不只靠颜色。
    return _cell(mark(flag), "allowed" if flag else "forbidden", highlight)


def _keys(js: list[int]) -> str:
    if len(js) > 2 and js == list(range(js[0], js[-1] + 1)):
        return f"Key {js[0]}–{js[-1]}"
    return "、".join(f"Key {j}" for j in js)


def _visibility_table(title: str, table: list[list[bool]], labels: list[str], current: set[int]) -> dict:
    n_key = len(table[0])
    return {
        "title": title,
        "header": ["查询 ＼ Key"] + [f"Key {j}" for j in range(n_key)],
        "rows": [
            [_cell(label, None, i in current)] + [_flag(flag, i in current) for flag in row]
            for i, (label, row) in enumerate(zip(labels, table))
        ],
    }


def _causal_frame(n: int) -> dict:
    table = att.visibility(N_POSITIONS, N_POSITIONS)  # (3, 3)
    allowed = [j for j, flag in enumerate(table[n]) if flag]
    forbidden = [j for j, flag in enumerate(table[n]) if not flag]
    text = f"查询在位置{n}，能读的是 {_keys(allowed)}"
    if len(allowed) == 1:
        text += "，也就是它自己，所以这一行的输出就是它自己的 Value"
    if forbidden:
        text += (
            f"。{_keys(forbidden)} 排在它后面：训练时整段文本已经在同一个输入数组里，"
            "可后面的位置里就有这一行要预测的下一个词，读了就等于偷看答案，所以一律禁止。"
        )
    else:
        text += "。没有比它更晚的 Key，整行都允许：这一行加不加因果 mask，结果都一样。"
    return {
        "condition": f"处理绝对位置{n}",
        "tables": [
            _visibility_table(
                f"可见性表：{N_POSITIONS}个有效位置，当前行是绝对位置{n}",
                table,
                [f"绝对位置 {i}" for i in range(N_POSITIONS)],
                {n},
            )
        ],
        "rule": f"允许Key位置 ≤ {n}",
        "explanation": text,
    }


def _score_frame() -> dict:
    visible = att.visibility(N_POSITIONS, N_POSITIONS)[SCORE_QUERY]
    mask = att.additive_mask([visible])[0]
    masked = [s + m for s, m in zip(SCORE_ROW, mask)]
    open_weights = att.softmax(SCORE_ROW)  # 不加 mask
    masked_weights = att.softmax(masked)  # 加 mask：禁止的格子权重恰为 0
    allowed = [j for j, flag in enumerate(visible) if flag]
    forbidden = [j for j, flag in enumerate(visible) if not flag]

    def row(label: str, texts: list[str], highlight: bool = False) -> list[dict]:
        return [_cell(label, None, highlight)] + [_cell(t, None, highlight) for t in texts]

    scores_text = "[" + ", ".join(short(s) for s in SCORE_ROW) + "]"
    return {
        "condition": f"绝对位置{SCORE_QUERY}的一行分数，加mask与不加mask对照",
        "tables": [
            {
                "title": f"分数行 {scores_text}，查询在绝对位置{SCORE_QUERY}",
                "header": ["项目 ＼ Key"] + [f"Key {j}" for j in range(len(SCORE_ROW))],
                "rows": [
                    [_cell("可见性")] + [_flag(flag) for flag in visible],
                    row("原始分数", [short(s) for s in SCORE_ROW]),
                    row("加性mask", [short(m) for m in mask]),
                    row("加mask后的分数", [short(s) for s in masked]),
                    row("不加mask的权重", [fmt(w) for w in open_weights]),
                    row("加mask的权重", [fmt(w) for w in masked_weights], True),
                ],
            }
        ],
        "rule": f"允许Key位置 ≤ {SCORE_QUERY}",
        "explanation": (
            f"{_keys(forbidden)} 在位置{SCORE_QUERY}之后，加性 mask 在它的分数上加 −∞。"
            f"不加 mask 时它分走 {', '.join(fmt(open_weights[j]) for j in forbidden)} 的权重；"
            f"加了 mask，它的权重恰好是 {', '.join(fmt(masked_weights[j]) for j in forbidden)}，"
            f"{_keys(allowed)} 重新分到 {' 与 '.join(fmt(masked_weights[j]) for j in allowed)}，"
            "每行之和仍然是 1。被禁止的格子根本进不了 softmax 的分母。"
        ),
    }


def _cache_frame() -> dict:
    n_key = PAST + NEW
    right = att.visibility(NEW, n_key, past=PAST)  # (new, past + new)
    wrong = att.row_index_visibility(NEW, n_key)  # 故意写错：行号当位置
    limits = "，".join(f"行 {i} ≤ {PAST + i}" for i in range(NEW))
    lost = [sum(r) - sum(w) for r, w in zip(right, wrong)]
    return {
        "condition": f"带缓存：past={PAST}，new={NEW}",
        "tables": [
            _visibility_table(
                "正确：按绝对位置 past + 行号判断",
                right,
                [f"行 {i}（绝对位置 {PAST + i}）" for i in range(NEW)],
                set(range(NEW)),
            ),
            _visibility_table(
                "写错：把本批行号当成位置",
                wrong,
                [f"行 {i}（误当位置 {i}）" for i in range(NEW)],
                set(),
            ),
        ],
        "rule": f"允许Key位置 ≤ past + 行号：{limits}",
        "explanation": (
            f"缓存里已有 {PAST} 个位置，新来的 {NEW} 个查询在本批里从行 0 数起，"
            f"绝对位置却是 {'、'.join(str(PAST + i) for i in range(NEW))}。"
            f"按绝对位置判断，行 0 能读 {_keys([j for j, f in enumerate(right[0]) if f])}。"
            f"把行号当位置时，{'、'.join(f'行 {i} 少读 {n} 个' for i, n in enumerate(lost))}早已在缓存里的位置："
            "这种写法不会泄漏未来，却悄悄丢掉了历史。"
        ),
    }


def f12_frames() -> list[dict]:
    """动态图解 F12 的五帧：三帧因果可见性表、一帧分数对照、一帧缓存偏移。

    >>> frames = f12_frames()
    >>> [f["condition"] for f in frames]  # doctest: +NORMALIZE_WHITESPACE
    ['处理绝对位置0', '处理绝对位置1', '处理绝对位置2',
     '绝对位置1的一行分数，加mask与不加mask对照', '带缓存：past=3，new=2']
    >>> [f["rule"] for f in frames[:3]]
    ['允许Key位置 ≤ 0', '允许Key位置 ≤ 1', '允许Key位置 ≤ 2']
    >>> [(c["text"], c["state"], c["highlight"]) for c in frames[0]["tables"][0]["rows"][0]]
    [('绝对位置 0', None, True), ('✓ 允许', 'allowed', True), ('✗ 禁止', 'forbidden', True), ('✗ 禁止', 'forbidden', True)]
    >>> [[c["text"] for c in row] for row in frames[3]["tables"][0]["rows"][1:]]  # doctest: +NORMALIZE_WHITESPACE
    [['原始分数', '0', '1', '2'], ['加性mask', '0', '0', '−∞'], ['加mask后的分数', '0', '1', '−∞'],
     ['不加mask的权重', '0.0900', '0.2447', '0.6652'], ['加mask的权重', '0.2689', '0.7311', '0.0000']]
    >>> [[c["state"] == "allowed" for c in row[1:]] for row in frames[4]["tables"][0]["rows"]]
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> frames[4]["rule"]
    '允许Key位置 ≤ past + 行号：行 0 ≤ 3，行 1 ≤ 4'
    """
    return [_causal_frame(n) for n in range(N_POSITIONS)] + [_score_frame(), _cache_frame()]


if __name__ == "__main__":
    import json

    print(json.dumps(f12_frames(), ensure_ascii=False, indent=2))
