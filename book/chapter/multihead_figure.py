"""The multi-head page's picture of the column split, drawn at build time from the page's example.

Top: Q with its columns coloured by head, and each head's own weight table (the cells the causal rule
forbids are grey, the same in every head). Bottom: the heads' outputs joined in head order, then the
output after W_o. Every number is the teaching code's, printed by ``chapter.fmt``; the words are
Chinese, set in Noto Sans CJK SC (Debian's fonts-noto-cjk, the PDF's Chinese font too).
"""

from __future__ import annotations

import importlib

from chapter import fmt
from chapter.costs import figure_fonts  # the figures' one font list (Noto Sans CJK SC)

mh = importlib.import_module("02_multihead")

COLOURS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]  # one per head (light: the numbers stay legible)
EDGES = ["#1f5fa8", "#b45f06", "#38761d", "#741b47"]
FORBIDDEN_FILL = "#d9d9d9"
W, H = 1.0, 0.62  # a cell's width and height in the figure's own units
LABEL, GAP = 0.85, 0.7  # room for 位置 i left of a table; an arrow's length


def _grid(ax, x0: float, y0: float, cells: list[list[str]], fills: list[list[str]], title: str,
          header: list[str], colour: str = "black") -> float:
    """A table whose cells start at (x0, y0), 位置 i left of row i, ``header`` above; returns its right edge."""
    from matplotlib.patches import Rectangle

    for j, text in enumerate(header):
        ax.text(x0 + (j + 0.5) * W, y0 + 0.05, text, ha="center", va="bottom", fontsize=6, color="#444444")
    for i, row in enumerate(cells):
        y = y0 - (i + 1) * H
        ax.text(x0 - 0.08, y + H / 2, f"位置 {i}", ha="right", va="center", fontsize=6.5)
        for j, text in enumerate(row):
            ax.add_patch(Rectangle((x0 + j * W, y), W, H, facecolor=fills[i][j], edgecolor="#666666", lw=0.6))
            ax.text(x0 + (j + 0.5) * W, y + H / 2, text, ha="center", va="center", fontsize=6.5)
    ax.text(x0 - LABEL, y0 + 0.36, title, ha="left", va="bottom", fontsize=7.5, color=colour)
    return x0 + len(cells[0]) * W


def _arrow(ax, x_from: float, x_to: float, y: float) -> None:
    ax.annotate("", xy=(x_to, y), xytext=(x_from, y), arrowprops={"arrowstyle": "->", "color": "#444444"})


def split_figure(x=None, w_q=None, w_k=None, w_v=None, w_o=None, heads: int | None = None):
    """The column split of the page's example (``02_multihead.DEMO``), as a matplotlib Figure.

    >>> fig = split_figure()
    >>> texts = [t.get_text() for t in fig.axes[0].texts]
    >>> "0.3302" in texts, "禁止" in texts, any(t.startswith("头 1 的权重") for t in texts)
    (True, True, True)
    """
    import matplotlib
    from matplotlib.figure import Figure  # a Figure, not pyplot's: no global list of figures to close

    matplotlib.rcParams["svg.hashsalt"] = "multihead"  # fixed ids in the SVG: the same HTML on every build

    args = [d if a is None else a for a, d in zip((x, w_q, w_k, w_v, w_o), mh.DEMO)]
    s = mh.multihead_steps(*args, mh.DEMO_HEADS if heads is None else heads)
    heads, d, n = s["heads"], s["head_dim"], len(s["q"])
    if heads > len(COLOURS):
        raise ValueError(f"图里每个头一种颜色：heads 至多为 {len(COLOURS)}，收到 {heads}")
    cols, out_cols = heads * d, len(s["output"][0])
    by_head = [[COLOURS[c // d] for c in range(cols)] for _ in range(n)]
    top, bottom = 0.0, -(n * H + 1.45)
    fig = Figure(figsize=(7.2, 3.7))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    import matplotlib as mpl

    with mpl.rc_context({"font.family": figure_fonts()}):
        col_names = [f"列 {c}" for c in range(cols)]
        mid_top, mid_bottom = top - n * H / 2, bottom - n * H / 2
        right = _grid(ax, LABEL, top, [[fmt.fmt(v) for v in row] for row in s["q"]], by_head,
                      f"投影后的 Q：{n} × {cols}，按列分给 {heads} 个头", col_names)
        for h in range(heads):
            ax.text(LABEL + (h * d + d / 2) * W, top - n * H - 0.1, f"头 {h}：列 {h * d}–{h * d + d - 1}",
                    ha="center", va="top", fontsize=7, color=EDGES[h])
        for h, table in enumerate(s["weights"]):
            x0 = right + GAP + LABEL
            _arrow(ax, right + 0.1, x0 - LABEL, mid_top) if h == 0 else None
            cells = [[fmt.fmt(p) if ok else "禁止" for p, ok in zip(row, vis)]
                     for row, vis in zip(table, s["visible"])]
            fills = [[COLOURS[h] if ok else FORBIDDEN_FILL for ok in vis] for vis in s["visible"]]
            right = _grid(ax, x0, top, cells, fills, f"头 {h} 的权重：只用列 {h * d}–{h * d + d - 1}，÷√{d}",
                          [f"Key {j}" for j in range(n)], EDGES[h])
        widest = right
        right = _grid(ax, LABEL, bottom, [[fmt.fmt(v) for v in row] for row in s["concat"]], by_head,
                      f"各头输出按头的顺序拼接：{n} × {cols}", col_names)
        x1 = right + 2 * GAP + LABEL
        _arrow(ax, right + 0.1, x1 - LABEL, mid_bottom)
        ax.text(right + 0.75, mid_bottom + 0.1, r"$\times\, W_o$", ha="center", va="bottom", fontsize=8)
        ax.text(right + 0.75, mid_bottom - 0.1, f"（{cols} × {out_cols}）", ha="center", va="top", fontsize=6.5)
        white = [["white"] * out_cols for _ in range(n)]
        right = _grid(ax, x1, bottom, [[fmt.fmt(v) for v in row] for row in s["output"]], white,
                      f"输出（拼接乘输出矩阵）：{n} × {out_cols}", [f"列 {c}" for c in range(out_cols)])
        ax.set_xlim(0, max(widest, right) + 0.1)
        ax.set_ylim(bottom - n * H - 0.1, top + 0.85)
    return fig
