"""The backpropagation page's figure: the chain of matrices of its worked example, forward and back.

Top row, the forward pass: S → P → O. Bottom row, the five steps of the backward pass from dO: dV, dP,
D, dS, dQ, dK. Every cell shows the value the page's tables show (``fmt.fmt``); a forbidden score is −∞
on grey, negative cells are tinted red, positive blue. One axes, the multi-head figure's cell grid.

>>> import importlib
>>> bp, att = importlib.import_module("02_backprop"), importlib.import_module("02_attention")
>>> s = bp.backward_steps(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT, att.visibility(3, 3))
>>> texts = [t.get_text() for t in chain_figure(s, att.scaled_scores(bp.EXAMPLE_Q, bp.EXAMPLE_K)).axes[0].texts]
>>> [t.split(chr(10))[0] for t in texts if t.startswith("第")]
['第 1 步 dV', '第 2 步 dP', '第 3 步 D', '第 4 步 dS', '第 5 步 dQ']
"""

from __future__ import annotations

import math

from chapter import fmt
from chapter.costs import figure_fonts
from chapter.multihead_figure import grid

# (title, key of backward_steps, the rows are keys rather than queries)
FORWARD = (("前向 S\n分数 QKᵀ/√d，禁止处 −∞", "scores", False), ("P\n逐行 softmax", "weights", False),
           ("O\nP 乘 V", "outputs", False))
BACKWARD = (("第 1 步 dV\n= Pᵀ·dO", "dv", True), ("第 2 步 dP\n= dO·Vᵀ", "dp", False),
            ("第 3 步 D\n= dO∘O 的行和", "rowsum_do_o", False), ("第 4 步 dS\n= P∘(dP − D)", "ds", False),
            ("第 5 步 dQ\n= dS·K/√d", "dq", False), ("dK\n= dSᵀ·Q/√d", "dk", True))
H, LABEL, GAP = 0.55, 1.0, 0.8  # a cell's height (its width is 1), the row labels' width, an arrow's length


def _colour(x: float, top: float):
    if not math.isfinite(x):
        return (0.8, 0.8, 0.8)
    shade = min(abs(x) / top, 1.0) * 0.55
    return (1 - shade * 0.3, 1 - shade, 1 - shade) if x < 0 else (1 - shade, 1 - shade * 0.6, 1)


def _row(ax, panels, values: dict, y0: float) -> list[tuple[float, float]]:
    """Panels left to right from y0 down; each panel's (left, right) edge."""
    edges, left = [], LABEL
    for title, key, key_rows in panels:
        m = values[key]
        top = max((abs(x) for row in m for x in row if math.isfinite(x)), default=1.0) or 1.0
        right = grid(ax, left, y0, [[fmt.fmt(x) for x in row] for row in m],
                     [[_colour(x, top) for x in row] for row in m], title, h=H, size=6,
                     labels=[f"{'Key' if key_rows else '查询'} {i}" for i in range(len(m))])
        edges.append((left, right))
        left = right + GAP + LABEL
    return edges


def chain_figure(steps: dict, scores):
    """The figure: ``steps`` is ``02_backprop.backward_steps``'s result, ``scores`` QKᵀ/√d unmasked."""
    import matplotlib
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    matplotlib.rcParams["svg.hashsalt"] = "backprop"  # fixed ids in the SVG: the same HTML on every build
    n = len(steps["weights"])
    masked = [[s if ok else -math.inf for s, ok in zip(row, vis)] for row, vis in zip(scores, steps["visible"])]
    values = dict(steps, scores=masked, rowsum_do_o=[[x] for x in steps["rowsum_do_o"]])
    fig = Figure(figsize=(11.0, 4.0))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    low_y = -(n * H + 1.3)
    with matplotlib.rc_context({"font.family": figure_fonts()}):
        top = _row(ax, FORWARD, values, 0.0)
        low = _row(ax, BACKWARD, values, low_y)
        for edges, y, texts in ((top, -n * H / 2, ("softmax", "乘 V")), (low, low_y - n * H / 2, [""] * 5)):
            for (_, a), (b, _), text in zip(edges, edges[1:], texts):
                ax.annotate("", xy=(b - LABEL + 0.1, y), xytext=(a + 0.1, y),
                            arrowprops={"arrowstyle": "-|>", "color": "#555555", "lw": 0.8})
                ax.text((a + b - LABEL) / 2 + 0.1, y + 0.08, text, ha="center", va="bottom", fontsize=6.5,
                        color="#555555")
        ax.text(top[-1][1] + 0.6, -n * H / 2, "反向从上游梯度 dO 出发，\n沿下面一行从左到右算回去", va="center",
                fontsize=7.5)
        ax.set_xlim(0, low[-1][1] + 0.2)
        ax.set_ylim(low_y - n * H - 0.1, 1.0)
    return fig
