"""The backpropagation page's figure: the chain of matrices of its worked example, forward and back.

Top row, the forward pass: S → P → O. Bottom row, the five steps of the backward pass from dO:
dV, dP, D, dS, dQ, dK. Every cell shows the value the page's tables show (``fmt.fmt``), a forbidden
score is −∞ on grey. The words are Chinese (Noto Sans CJK SC, as on the costs page's figure); no
mathtext, whose fonts have no Chinese glyphs.

>>> import importlib
>>> bp = importlib.import_module("02_backprop")
>>> att = importlib.import_module("02_attention")
>>> fig = chain_figure(bp.backward_steps(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT,
...                                      att.visibility(3, 3)), att.scaled_scores(bp.EXAMPLE_Q, bp.EXAMPLE_K))
>>> [ax.get_title(loc="left").split(chr(10))[0] for ax in fig.axes]
['前向 S', 'P', 'O', '第 1 步 dV', '第 2 步 dP', '第 3 步 D', '第 4 步 dS', '第 5 步 dQ', 'dK']
"""

from __future__ import annotations

import math

from chapter import fmt
from chapter.costs import figure_fonts

# (title, key of backward_steps, the rows are keys rather than queries)
FORWARD = (("前向 S\n分数 QKᵀ/√d，禁止处 −∞", "scores", False),
           ("P\n逐行 softmax", "weights", False),
           ("O\nP 乘 V", "outputs", False))
BACKWARD = (("第 1 步 dV\n= Pᵀ·dO", "dv", True),
            ("第 2 步 dP\n= dO·Vᵀ", "dp", False),
            ("第 3 步 D\n= dO∘O 的行和", "rowsum_do_o", False),
            ("第 4 步 dS\n= P∘(dP − D)", "ds", False),
            ("第 5 步 dQ\n= dS·K/√d", "dq", False),
            ("dK\n= dSᵀ·Q/√d", "dk", True))
GAP, LABEL = 1.9, 0.8  # between two panels, and the row labels' width, in cell widths


def _panel(fig, box, matrix, title, key_rows, fonts):
    """One matrix as a grid of cells with its values; negative cells tinted red, positive blue."""
    ax = fig.add_axes(box)
    n_rows, n_cols = len(matrix), len(matrix[0])
    top = max((abs(x) for row in matrix for x in row if math.isfinite(x)), default=1.0) or 1.0
    for i, row in enumerate(matrix):
        for j, x in enumerate(row):
            if math.isfinite(x):
                shade = min(abs(x) / top, 1.0) * 0.55
                colour = (1 - shade * 0.3, 1 - shade, 1 - shade) if x < 0 else (1 - shade, 1 - shade * 0.6, 1)
            else:
                colour = (0.8, 0.8, 0.8)
            ax.add_patch(_rect((j, n_rows - 1 - i), colour))
            ax.text(j + 0.5, n_rows - 0.5 - i, fmt.fmt(x), ha="center", va="center", fontsize=6,
                    family=fonts)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(0, n_rows)
    ax.set_xticks([])
    ax.set_yticks([r + 0.5 for r in range(n_rows)],
                  [f"{'Key' if key_rows else '查询'} {n_rows - 1 - r}" for r in range(n_rows)])
    for label in ax.get_yticklabels():
        label.set_fontfamily(fonts)
        label.set_fontsize(6.5)
    ax.tick_params(length=0, pad=1)
    ax.set_title(title, loc="left", family=fonts, fontsize=7.5)
    return ax


def _rect(xy, colour):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5)


def _row(fig, panels, y, height, unit, left, fonts):
    """Lay panels out left to right; return each panel's box in figure coordinates."""
    boxes = []
    for title, matrix, key_rows in panels:
        box = [left, y, len(matrix[0]) * unit, height]
        _panel(fig, box, matrix, title, key_rows, fonts)
        boxes.append(box)
        left += (len(matrix[0]) + GAP) * unit
    return boxes


def _arrow(fig, start, end, text, fonts):
    fig.add_artist(_patch(fig, start, end))
    fig.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.015, text, ha="center", va="bottom",
             family=fonts, fontsize=6.5, color="#555555")


def _patch(fig, start, end):
    from matplotlib.patches import FancyArrowPatch

    return FancyArrowPatch(start, end, transform=fig.transFigure, arrowstyle="-|>", mutation_scale=8,
                           color="#555555", linewidth=0.8)


def chain_figure(steps: dict, scores):
    """The figure: ``steps`` is ``02_backprop.backward_steps``'s result, ``scores`` QKᵀ/√d unmasked."""
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    fonts = figure_fonts()
    q_rows = len(steps["weights"])
    masked = [[s if ok else -math.inf for s, ok in zip(row, vis)]
              for row, vis in zip(scores, steps["visible"])]
    values = dict(steps, scores=masked, rowsum_do_o=[[x] for x in steps["rowsum_do_o"]])
    fig = Figure(figsize=(11.0, 4.0))
    unit, height = 0.041, 0.08 * q_rows
    top = _row(fig, [(t, values[k], r) for t, k, r in FORWARD], 0.55, height, unit, 0.05, fonts)
    low = _row(fig, [(t, values[k], r) for t, k, r in BACKWARD], 0.07, height, unit, 0.05, fonts)
    mid = lambda box: box[1] + box[3] / 2  # noqa: E731
    for a, b, text in ((top[0], top[1], "softmax"), (top[1], top[2], "乘 V")):
        _arrow(fig, (a[0] + a[2] + 0.004, mid(a)), (b[0] - LABEL * unit, mid(b)), text, fonts)
    for a, b in zip(low, low[1:]):
        fig.add_artist(_patch(fig, (a[0] + a[2] + 0.004, mid(a)), (b[0] - LABEL * unit, mid(b))))
    o = top[2]
    fig.text(o[0] + o[2] + 0.02, mid(o), "反向从上游梯度 dO 出发，\n沿下面一行从左到右算回去",
             va="center", family=fonts, fontsize=7.5)
    return fig
