"""The chapter opening (book/ch02/index.md): the sizes of its demo data and which teaching files use numpy."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

from chapter.fmt import glue_all  # noqa: F401  (the opening page calls page.glue_all)

att = importlib.import_module("02_attention")
CODE_DIR = Path(att.__file__).parent

def numpy_users(code_dir: Path | None = None) -> list[str]:
    """The teaching files (``code/02_*.py``) that import numpy anywhere, read from their syntax trees.

    A comment or a docstring that names numpy is not an import; ``import numpy as np`` inside a
    function is.

    >>> numpy_users()
    ['02_costs.py', '02_exercises_tensors.py', '02_tensors.py', '02_tensors_torch.py', '02_training.py']
    """
    if code_dir is not None and not isinstance(code_dir, (str, Path)):
        raise ValueError(f"code_dir 必须是一个文件夹的路径，收到 {code_dir!r}")
    code_dir = CODE_DIR if code_dir is None else Path(code_dir)
    if not code_dir.is_dir():
        raise ValueError(f"code_dir 必须是一个文件夹，收到 {str(code_dir)!r}")
    return [path.name for path in sorted(code_dir.glob("02_*.py")) if _imports_numpy(path.read_text(encoding="utf-8"))]


@functools.lru_cache(maxsize=256)
def _imports_numpy(source: str) -> bool:
    """Whether a file's syntax tree imports numpy (the build asks once per page: each file is parsed once)."""
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(name == "numpy" or name.startswith("numpy.") for name in names):
            return True
    return False


def numpy_needed(code_dir: Path | None = None) -> list[str]:
    """The teaching files that need numpy to run: those that import it, and those that import one of them.

    ``02_exercises_training.py`` does not import numpy itself, but it imports ``02_training``, which does.

    >>> numpy_needed()
    ['02_costs.py', '02_exercises_costs.py', '02_exercises_tensors.py', '02_exercises_training.py', '02_tensors.py', '02_tensors_torch.py', '02_training.py']
    """
    from chapter.take_home import imports  # the one follower of ``import_module("02_…")``

    users = set(numpy_users(code_dir))
    code_dir = CODE_DIR if code_dir is None else Path(code_dir)
    return sorted(p.name for p in code_dir.glob("02_*.py") if users & set(imports(p.name, code_dir)))


def opening() -> dict:
    """The chapter opening (book/ch02/index.md): the sizes of the demo data, which teaching files need numpy, and
    which of them need PyTorch too (named ``*_torch.py``)."""
    q, k, v = (att.as_matrix(m, name) for m, name in ((att.DEMO_Q, "Q"), (att.DEMO_K, "K"), (att.DEMO_V, "V")))
    n_query, d, n_key, d_v = len(q), len(q[0]), len(k), len(v[0])
    from chapter.take_home import needs_torch

    users = numpy_needed()
    torch_files = [name for name in users if needs_torch(name)]
    plain = [name for name in users if not needs_torch(name)]
    return {"n_query": n_query, "n_key": n_key, "d": d, "d_v": d_v,
            "numpy_files": "、".join(plain) if plain else "没有哪个文件",
            "torch_files": "、".join(torch_files) if torch_files else "没有哪个文件",
            "fig_projections": projection_figure()}


def projection_shapes() -> dict:
    """The shapes of the multi-head page's example: X (n × d_model) and the three weight matrices."""
    mh = importlib.import_module("02_multihead")
    n, d_model = len(mh.DEMO_X), len(mh.DEMO_X[0])
    return {"n": n, "d_model": d_model, "cols": {name: len(w[0]) for name, w in
                                                 (("Q", mh.DEMO_WQ), ("K", mh.DEMO_WK), ("V", mh.DEMO_WV))}}


def projection_figure(shapes: dict | None = None):
    """X times each of W_q, W_k, W_v gives Q, K, V: one row of X becomes one row of each, drawn as grids.

    >>> fig = projection_figure()
    >>> [t.get_text() for t in fig.axes[0].texts][:2]
    ['X', '3 × 4']
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from chapter.costs import figure_fonts

    s = projection_shapes() if shapes is None else shapes
    n, d_model = s["n"], s["d_model"]
    fonts = {"family": figure_fonts()}
    fig = Figure(figsize=(6.4, 4.6), layout="tight")
    ax = fig.subplots()
    ax.set_axis_off()
    cell = 0.4

    def grid(x0, y0, rows, cols, name, colour, highlight_row=0):
        for r in range(rows):
            for c in range(cols):
                face = colour if r == highlight_row else "#ffffff"
                ax.add_patch(Rectangle((x0 + c * cell, y0 - (r + 1) * cell), cell, cell, facecolor=face,
                                       edgecolor="#333333", linewidth=0.8))
        ax.text(x0 + cols * cell / 2, y0 + 0.25, name, ha="center", va="bottom", fontsize=12, fontdict=fonts)
        ax.text(x0 + cols * cell / 2, y0 - rows * cell - 0.15, f"{rows} × {cols}", ha="center", va="top",
                fontsize=9, fontdict=fonts)

    gap = n * cell + 1.0  # one grid and its two labels
    grid(0.0, 0.0, n, d_model, "X", "#f5d7a1")
    colours = {"Q": "#a9c8ec", "K": "#b8e0b0", "V": "#e7b8c9"}
    x_right = d_model * cell + 3.2
    for row, (name, cols) in enumerate(s["cols"].items()):
        y = gap * (1 - row)  # Q above X's row, K level with it, V below
        start, end = (d_model * cell + 0.1, -n * cell / 2), (x_right - 0.1, y - n * cell / 2)
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "#555555"})
        ax.text(start[0] + 0.55 * (end[0] - start[0]), start[1] + 0.55 * (end[1] - start[1]) + 0.12,
                f"乘 W_{name.lower()}（{d_model} × {cols}）", ha="center", va="bottom", fontsize=9,
                fontdict=fonts, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        grid(x_right, y, n, cols, name, colours[name])
    ax.text(0.0, -gap - n * cell - 0.9, "着色的一行：X 的第 0 行投影成 Q、K、V 各自的第 0 行", fontsize=9,
            fontdict=fonts)
    ax.set_xlim(-0.3, x_right + max(s["cols"].values()) * cell + 0.3)
    ax.set_ylim(-gap - n * cell - 1.1, gap + 0.7)
    ax.set_aspect("equal")
    return fig
