"""The multi-head page's picture of the column split, and the cell grid it shares with the backprop figure.

Top: Q with its columns coloured by head, and each head's own weight table (the cells the causal rule
forbids are grey, the same in every head). Bottom: the heads' outputs joined in head order, then the
output after W_o. Numbers by ``chapter.fmt``; Chinese set in Noto Sans CJK SC (``costs.figure_fonts``).
"""

from __future__ import annotations

from chapter import fmt
from chapter.costs import figure_fonts  # the figures' one font list (Noto Sans CJK SC)

COLOURS = ["#cfe2f3", "#fce5cd", "#d9ead3", "#ead1dc"]  # one per head (light: the numbers stay legible)
EDGES = ["#1f5fa8", "#b45f06", "#38761d", "#741b47"]
FORBIDDEN_FILL = "#d9d9d9"
W, H = 1.0, 0.62  # a cell's width and height in the figure's own units
LABEL, GAP = 0.85, 0.7  # room for 位置 i left of a table; an arrow's length


def grid(ax, x0: float, y0: float, cells, fills, title: str, header=(), labels=None, colour="black",
         w: float = W, h: float = H, size: float = 6.5) -> float:
    """A table of text cells whose top left is (x0, y0), ``labels`` left of its rows (``位置 i`` by default),
    ``header`` above, ``title`` over it; one PatchCollection for the cells. Returns the right edge."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    labels = labels or [f"位置 {i}" for i in range(len(cells))]
    boxes, colours = [], []
    for j, text in enumerate(header):
        ax.text(x0 + (j + 0.5) * w, y0 + 0.05, text, ha="center", va="bottom", fontsize=6, color="#444444")
    for i, row in enumerate(cells):
        y = y0 - (i + 1) * h
        ax.text(x0 - 0.08, y + h / 2, labels[i], ha="right", va="center", fontsize=size)
        for j, text in enumerate(row):
            boxes.append(Rectangle((x0 + j * w, y), w, h))
            colours.append(fills[i][j])
            ax.text(x0 + (j + 0.5) * w, y + h / 2, text, ha="center", va="center", fontsize=size)
    ax.add_collection(PatchCollection(boxes, facecolors=colours, edgecolors="#666666", linewidths=0.6))
    ax.text(x0 - LABEL, y0 + (0.36 if header else 0.08), title, ha="left", va="bottom", fontsize=7.5, color=colour)
    return x0 + len(cells[0]) * w


def arrow(ax, x_from: float, x_to: float, y: float) -> None:
    ax.annotate("", xy=(x_to, y), xytext=(x_from, y), arrowprops={"arrowstyle": "->", "color": "#444444"})


def split_figure(s: dict):
    """The column split of ``02_multihead.multihead_steps``'s result ``s``, as a matplotlib Figure.

    >>> import importlib; mh = importlib.import_module("02_multihead")
    >>> texts = [t.get_text() for t in split_figure(mh.multihead_steps(*mh.DEMO, 2)).axes[0].texts]
    >>> "0.3302" in texts, "禁止" in texts, any(t.startswith("头 1 的权重") for t in texts)
    (True, True, True)
    """
    import matplotlib
    from matplotlib.figure import Figure  # a Figure, not pyplot's: no global list of figures to close

    matplotlib.rcParams["svg.hashsalt"] = "multihead"  # fixed ids in the SVG: the same HTML on every build
    heads, d, n = s["heads"], s["head_dim"], len(s["q"])
    if heads > len(COLOURS):
        raise ValueError(f"图里每个头一种颜色：heads 至多为 {len(COLOURS)}，收到 {heads}")
    cols, out_cols = heads * d, len(s["output"][0])
    by_head = [[COLOURS[c // d] for c in range(cols)]] * n
    values = lambda m: [[fmt.fmt(v) for v in row] for row in m]  # noqa: E731
    top, bottom = 0.0, -(n * H + 1.45)
    fig = Figure(figsize=(7.2, 3.7))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    with matplotlib.rc_context({"font.family": figure_fonts()}):
        col_names = [f"列 {c}" for c in range(cols)]
        mid_top, mid_bottom = top - n * H / 2, bottom - n * H / 2
        right = grid(ax, LABEL, top, values(s["q"]), by_head, f"投影后的 Q：{n} × {cols}，按列分给 {heads} 个头",
                     col_names)
        for h in range(heads):
            ax.text(LABEL + (h * d + d / 2) * W, top - n * H - 0.1, f"头 {h}：列 {h * d}–{h * d + d - 1}",
                    ha="center", va="top", fontsize=7, color=EDGES[h])
        arrow(ax, right + 0.1, right + GAP, mid_top)
        for h, table in enumerate(s["weights"]):
            cells = [[fmt.fmt(p) if ok else "禁止" for p, ok in zip(row, vis)] for row, vis in zip(table, s["visible"])]
            fills = [[COLOURS[h] if ok else FORBIDDEN_FILL for ok in vis] for vis in s["visible"]]
            right = grid(ax, right + GAP + LABEL, top, cells, fills, f"头 {h} 的权重：只用列 {h * d}–{h * d + d - 1}，÷√{d}",
                         [f"Key {j}" for j in range(n)], colour=EDGES[h])
        widest = right
        right = grid(ax, LABEL, bottom, values(s["concat"]), by_head, f"各头输出按头的顺序拼接：{n} × {cols}", col_names)
        x1 = right + 2 * GAP + LABEL
        arrow(ax, right + 0.1, x1 - LABEL, mid_bottom)
        ax.text(right + 0.75, mid_bottom + 0.1, r"$\times\, W_o$", ha="center", va="bottom", fontsize=8)
        ax.text(right + 0.75, mid_bottom - 0.1, f"（{cols} × {out_cols}）", ha="center", va="top", fontsize=6.5)
        right = grid(ax, x1, bottom, values(s["output"]), [["white"] * out_cols] * n,
                     f"输出（拼接乘输出矩阵）：{n} × {out_cols}", [f"列 {c}" for c in range(out_cols)])
        ax.set_xlim(0, max(widest, right) + 0.1)
        ax.set_ylim(bottom - n * H - 0.1, top + 0.85)
    return fig
