"""Two figures drawn as grids of numbered cells: the multi-head page's column split, backprop's chain."""

from __future__ import annotations

import contextlib
import math

from chapter import fmt
from chapter.costs import figure_fonts  # the figures' one font list (Noto Sans CJK SC)

COLOURS = [
    "#cfe2f3",
    "#fce5cd",
    "#d9ead3",
    "#ead1dc",
]  # one per head (light: the numbers stay legible)
EDGES = ["#1f5fa8", "#b45f06", "#38761d", "#741b47"]
W = 1.0
H = 0.62  # a cell's width and height in the figure's own units
LABEL = 0.85
GAP = 0.7  # room for 位置 i left of a table; an arrow's length
# backprop's panels: (title, key of backward_steps, the rows are keys rather than queries)
FORWARD = (
    ("前向 S\n分数 QKᵀ/√d，禁止处 −∞", "scores", False),
    ("P\n逐行 softmax", "weights", False),
    ("O\nP 乘 V", "outputs", False),
)
BACKWARD = (
    ("第 1 步 dV\n= Pᵀ·dO", "dv", True),
    ("第 2 步 dP\n= dO·Vᵀ", "dp", False),
    ("第 3 步 D\n= dO∘O 的行和", "rowsum_do_o", False),
    ("第 4 步 dS\n= P∘(dP − D)", "ds", False),
    ("第 5 步 dQ\n= dS·K/√d", "dq", False),
    ("dK\n= dSᵀ·Q/√d", "dk", True),
)
CHAIN_H = 0.55
CHAIN_LABEL = 1.0
CHAIN_GAP = 0.8


@contextlib.contextmanager
def canvas(size: tuple[float, float], salt: str):
    """A Figure (not pyplot's: no global list to close) and its one bare axes, drawn in the figures' fonts."""
    import matplotlib
    from matplotlib.figure import Figure

    matplotlib.rcParams["svg.hashsalt"] = salt  # fixed ids in the SVG: the same HTML on every build
    fig = Figure(figsize=size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    with matplotlib.rc_context({"font.family": figure_fonts()}):
        yield fig, ax


def grid(
    ax,
    x0: float,
    y0: float,
    cells,
    fills,
    title: str,
    header=(),
    labels=None,
    colour="black",
    w: float = W,
    h: float = H,
    size: float = 6.5,
) -> float:
    """Text cells from (x0, y0) down, ``labels`` left, ``header`` and ``title`` above; its right edge."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    labels = labels or [f"位置 {i}" for i in range(len(cells))]
    boxes = []
    colours = []
    for j, text in enumerate(header):
        ax.text(
            x0 + (j + 0.5) * w,
            y0 + 0.05,
            text,
            ha="center",
            va="bottom",
            fontsize=6,
            color="#444444",
        )
    for i, row in enumerate(cells):
        y = y0 - (i + 1) * h
        ax.text(x0 - 0.08, y + h / 2, labels[i], ha="right", va="center", fontsize=size)
        for j, text in enumerate(row):
            boxes.append(Rectangle((x0 + j * w, y), w, h))
            colours.append(fills[i][j])
            ax.text(x0 + (j + 0.5) * w, y + h / 2, text, ha="center", va="center", fontsize=size)
    ax.add_collection(
        PatchCollection(boxes, facecolors=colours, edgecolors="#666666", linewidths=0.6)
    )
    ax.text(
        x0 - LABEL,
        y0 + (0.36 if header else 0.08),
        title,
        ha="left",
        va="bottom",
        fontsize=7.5,
        color=colour,
    )
    return x0 + len(cells[0]) * w


def arrow(ax, x_from: float, x_to: float, y: float, **style) -> None:
    style = {"arrowstyle": "->", "color": "#444444"} | style
    ax.annotate("", xy=(x_to, y), xytext=(x_from, y), arrowprops=style)


def split_figure(s: dict):
    """The column split of a ``multihead_steps`` result: Q by head, the heads' weights, outputs, W_o."""
    heads = s["heads"]
    d = s["head_dim"]
    n = len(s["q"])
    if heads > len(COLOURS):
        raise ValueError(f"图里每个头一种颜色：heads 至多为 {len(COLOURS)}，收到 {heads}")
    cols = heads * d
    out_cols = len(s["output"][0])
    by_head = [[COLOURS[c // d] for c in range(cols)]] * n

    def values(m):
        return [[fmt.fmt(v) for v in row] for row in m]

    def span(h):
        return f"列 {h * d}–{h * d + d - 1}"

    top = 0.0
    bottom = -(n * H + 1.45)
    with canvas((7.2, 3.7), "multihead") as (fig, ax):
        col_names = [f"列 {c}" for c in range(cols)]
        mid_top = top - n * H / 2
        mid_bottom = bottom - n * H / 2
        title = f"投影后的 Q：{n} × {cols}，按列分给 {heads} 个头"
        right = grid(ax, LABEL, top, values(s["q"]), by_head, title, col_names)
        for h in range(heads):
            x = LABEL + (h * d + d / 2) * W
            y = top - n * H - 0.1
            ax.text(x, y, f"头 {h}：{span(h)}", ha="center", va="top", fontsize=7, color=EDGES[h])
        arrow(ax, right + 0.1, right + GAP, mid_top)
        for h, table in enumerate(s["weights"]):
            cells = [
                [fmt.fmt(p) if ok else "禁止" for p, ok in zip(row, vis)]
                for row, vis in zip(table, s["visible"])
            ]
            fills = [[COLOURS[h] if ok else "#d9d9d9" for ok in vis] for vis in s["visible"]]
            right = grid(
                ax,
                right + GAP + LABEL,
                top,
                cells,
                fills,
                f"头 {h} 的权重：只用{span(h)}，÷√{d}",
                [f"Key {j}" for j in range(n)],
                colour=EDGES[h],
            )
        widest = right
        title = f"各头输出按头的顺序拼接：{n} × {cols}"
        right = grid(ax, LABEL, bottom, values(s["concat"]), by_head, title, col_names)
        x1 = right + 2 * GAP + LABEL
        arrow(ax, right + 0.1, x1 - LABEL, mid_bottom)
        ax.text(
            right + 0.75, mid_bottom + 0.1, r"$\times\, W_o$", ha="center", va="bottom", fontsize=8
        )
        ax.text(
            right + 0.75,
            mid_bottom - 0.1,
            f"（{cols} × {out_cols}）",
            ha="center",
            va="top",
            fontsize=6.5,
        )
        right = grid(
            ax,
            x1,
            bottom,
            values(s["output"]),
            [["white"] * out_cols] * n,
            f"输出（拼接乘输出矩阵）：{n} × {out_cols}",
            [f"列 {c}" for c in range(out_cols)],
        )
        ax.set_xlim(0, max(widest, right) + 0.1)
        ax.set_ylim(bottom - n * H - 0.1, top + 0.85)
    return fig


def _colour(x: float, top: float):
    if not math.isfinite(x):
        return (0.8, 0.8, 0.8)
    shade = min(abs(x) / top, 1.0) * 0.55
    return (1 - shade * 0.3, 1 - shade, 1 - shade) if x < 0 else (1 - shade, 1 - shade * 0.6, 1)


def _chain_row(ax, panels, values: dict, y0: float) -> list[tuple[float, float]]:
    """Panels left to right from y0 down; each panel's (left, right) edge."""
    edges = []
    left = CHAIN_LABEL
    for title, key, key_rows in panels:
        m = values[key]
        top = max((abs(x) for row in m for x in row if math.isfinite(x)), default=1.0) or 1.0
        right = grid(
            ax,
            left,
            y0,
            [[fmt.fmt(x) for x in row] for row in m],
            [[_colour(x, top) for x in row] for row in m],
            title,
            h=CHAIN_H,
            size=6,
            labels=[f"{'Key' if key_rows else '查询'} {i}" for i in range(len(m))],
        )
        edges.append((left, right))
        left = right + CHAIN_GAP + CHAIN_LABEL
    return edges


def chain_figure(steps: dict, scores):
    """backprop's chain: forward S → P → O above, the backward steps from dO below (``scores``: QKᵀ/√d)."""
    n = len(steps["weights"])
    h = CHAIN_H
    masked = [
        [x if ok else -math.inf for x, ok in zip(r, vis)]
        for r, vis in zip(scores, steps["visible"])
    ]
    values = dict(steps, scores=masked, rowsum_do_o=[[x] for x in steps["rowsum_do_o"]])
    low_y = -(n * h + 1.3)
    with canvas((11.0, 4.0), "backprop") as (fig, ax):
        top = _chain_row(ax, FORWARD, values, 0.0)
        low = _chain_row(ax, BACKWARD, values, low_y)
        for edges, y, texts in (
            (top, -n * h / 2, ("softmax", "乘 V")),
            (low, low_y - n * h / 2, [""] * 5),
        ):
            for (_, a), (b, _), text in zip(edges, edges[1:], texts):
                arrow(
                    ax, a + 0.1, b - CHAIN_LABEL + 0.1, y, arrowstyle="-|>", color="#555555", lw=0.8
                )
                ax.text(
                    (a + b - CHAIN_LABEL) / 2 + 0.1,
                    y + 0.08,
                    text,
                    ha="center",
                    va="bottom",
                    fontsize=6.5,
                    color="#555555",
                )
        note = "反向从上游梯度 dO 出发，\n沿下面一行从左到右算回去"
        ax.text(top[-1][1] + 0.6, -n * h / 2, note, va="center", fontsize=7.5)
        ax.set_xlim(0, low[-1][1] + 0.2)
        ax.set_ylim(low_y - n * h - 0.1, 1.0)
    return fig
