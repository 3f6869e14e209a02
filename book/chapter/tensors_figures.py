"""The tensors page's two figures (top-left against bottom-right; the batch); each cell says ✓ or ✗ too."""

from __future__ import annotations

import importlib

import numpy as np

from chapter.costs import figure_fonts  # the figures' one font list (Noto Sans CJK SC)
from chapter.page import figure

tn = importlib.import_module("02_tensors")

ALLOWED = "#1f5fa8"
FORBIDDEN = "#e8e8e8"
PAD = "#c0392b"


def top_left(n_query: int, n_key: int) -> np.ndarray:
    """The causal table when the queries are counted from 0 (row i reads keys 0…i), shape (n_query, n_key).

    >>> top_left(2, 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0]]
    """
    past = n_key - n_query
    return tn.visibility_batch(
        lambda b, h, q, k: tn.causal(b, h, q - past, k), 1, 1, n_query, n_key
    )[0, 0]


def _panels(panels: list[tuple], salt: str):
    """Visibility tables side by side, one ``(table, title, valid)`` each; a dashed line after the cache.

    The book's figure factory (``page.figure``: fonts, stable SVG ids) gives the figure; its one bare frame
    makes way for a panel per table. Tick labels are drawn when the figure is saved, after the factory's
    block: every text names its font family.
    """
    from matplotlib.patches import Rectangle

    family = figure_fonts()
    with figure((7.2, 2.1), salt) as (fig, frame):
        fig.delaxes(frame)
        axes = np.atleast_1d(fig.subplots(1, len(panels)))
    for ax, (table, title, valid) in zip(axes, panels):
        n_query, n_key = table.shape
        past = n_key - n_query
        for (i, k), ok in np.ndenumerate(table):
            ax.add_patch(
                Rectangle((k + 0.04, i + 0.04), 0.92, 0.92, color=ALLOWED if ok else FORBIDDEN)
            )
            ax.text(
                k + 0.5,
                i + 0.5,
                "✓" if ok else "✗",
                ha="center",
                va="center",
                fontsize=11,
                color="white" if ok else "#555555",
                family=family,
            )
        ax.set(xlim=(0, n_key), ylim=(n_query, -0.9), aspect="equal")
        ax.set_xticks(
            [k + 0.5 for k in range(n_key)],
            [f"{k}" if valid[k] else f"{k}\nPAD" for k in range(n_key)],
            family=family,
            fontsize=8,
        )
        for k, label in enumerate(ax.get_xticklabels()):
            label.set_color("black" if valid[k] else PAD)
        ax.set_yticks(
            [i + 0.5 for i in range(n_query)],
            [f"查询 {i}（绝对位置 {past + i}）" for i in range(n_query)],
            family=family,
            fontsize=8,
        )
        ax.tick_params(length=0)
        ax.spines[:].set_visible(False)
        if past:
            ax.axvline(past, color="black", linestyle="--", linewidth=1)
            ax.text(
                past / 2, -0.45, f"缓存（past = {past}）", ha="center", family=family, fontsize=8
            )
        ax.text(past + n_query / 2, -0.45, "新位置", ha="center", family=family, fontsize=8)
        ax.set_title(title, family=family, fontsize=9)
        ax.set_xlabel("Key 的位置", family=family, fontsize=8)
    fig.tight_layout()
    return fig


def alignment_figure(n_query: int, n_key: int):
    """Two panels: top-left against bottom-right alignment of a causal table with a cache.

    >>> [ax.get_title() for ax in alignment_figure(2, 6).axes]
    ['左上对齐：查询 i 读 Key 0…i', '右下对齐：查询 i 读 Key 0…past + i']
    """
    right = tn.visibility_batch(tn.causal, 1, 1, n_query, n_key)[0, 0]
    return _panels(
        [
            (top_left(n_query, n_key), "左上对齐：查询 i 读 Key 0…i", [True] * n_key),
            (right, "右下对齐：查询 i 读 Key 0…past + i", [True] * n_key),
        ],
        "tensors-align",
    )


def batch_figure(visible: np.ndarray, attention_mask):
    """The batch's (batch, heads, n_query, n_key) table, one panel per sequence: head 0's (the page's section
    checks that every head has the same).

    >>> x = tn.demo_inputs()
    >>> [ax.get_title() for ax in batch_figure(tn.forward(x)["visible"], x["attention_mask"]).axes]
    ['序列 0（4 个头共用这张表）', '序列 1（4 个头共用这张表）']
    """
    heads = visible.shape[1]
    mask = np.asarray(attention_mask)
    return _panels(
        [
            (table[0], f"序列 {b}（{heads} 个头共用这张表）", mask[b] == 1)
            for b, table in enumerate(visible)
        ],
        "tensors-batch",
    )
