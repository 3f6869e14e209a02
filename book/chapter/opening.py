"""The preface (book/index.md) and the chapter opening (book/ch02/index.md): the preface's claims about
the recorded library observations, the sizes of the demo data and which teaching files use numpy."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

# take_home's ``imports`` follows ``import_module("02_…")``; it imports this module too.
from chapter import conventions, fmt, take_home
from chapter.fmt import glue_all  # noqa: F401  (the pages call page.glue_all)
from chapter.mask_facts import claim

att = importlib.import_module("02_attention")
CODE_DIR = Path(att.__file__).parent


def numpy_users(code_dir: Path | None = None) -> list[str]:
    """The teaching files (``code/02_*.py``) whose syntax tree imports numpy (a comment naming it doesn't)."""
    if code_dir is not None and not isinstance(code_dir, (str, Path)):
        raise ValueError(f"code_dir 必须是一个文件夹的路径，收到 {code_dir!r}")
    code_dir = CODE_DIR if code_dir is None else Path(code_dir)
    if not code_dir.is_dir():
        raise ValueError(f"code_dir 必须是一个文件夹，收到 {str(code_dir)!r}")
    return [
        path.name
        for path in sorted(code_dir.glob("02_*.py"))
        if _imports_numpy(path.read_text(encoding="utf-8"))
    ]


@functools.lru_cache(maxsize=256)
def _imports_numpy(source: str) -> bool:
    """Whether a file's syntax tree imports numpy (cached: the build asks once per page)."""
    nodes = list(ast.walk(ast.parse(source)))
    names = [a.name for n in nodes if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in nodes if isinstance(n, ast.ImportFrom)]
    return any(name.split(".")[0] == "numpy" for name in names)


def numpy_needed(code_dir: Path | None = None) -> list[str]:
    """The teaching files that import numpy, or import one that does (as 02_exercises_training does)."""
    users = set(numpy_users(code_dir))
    code_dir = CODE_DIR if code_dir is None else Path(code_dir)
    return sorted(
        p.name for p in code_dir.glob("02_*.py") if users & {*take_home.imports(p.name, code_dir)}
    )


def recorded_conditions(seen: dict | None = None) -> dict:
    """What each recorded library observation says about where it was made, per device and library:
    ``{"cpu": {"torch": ["version", "device", "dtype", "kernels"], ...}}``."""
    seen = conventions.observed() if seen is None else seen
    out = {}
    for device, libs in seen.items():
        out[device] = {}
        for name, lib in libs.items():
            kept = [k for k in ("version", "device", "dtype", "backend") if k in lib]
            if "kernels" in lib.get("sdpa", {}):
                kept.append("kernels")
            if "implementation" in lib.get("dot_product_attention", {}):
                kept.append("implementation")
            out[device][name] = kept
    return out


def preface(seen: dict | None = None) -> dict:
    """The preface's numbers: how the book prints numbers; and the check of its sentence on the record."""
    conditions = recorded_conditions(seen)
    claim(
        all(
            {"version", "device", "dtype"} <= set(kept)
            for libs in conditions.values()
            for kept in libs.values()
        )
        and all("kernels" in libs["torch"] for libs in conditions.values())
        and all("implementation" in libs["jax"] for libs in conditions.values())
        and all("backend" in libs["keras"] for libs in conditions.values()),
        "每一条都记着库的版本、设备和 dtype，PyTorch 的还记着实际运行的内核"
        "（JAX 记着所用的实现，Keras 记着后端）",
    )
    return {"decimals": fmt.decimals_sentence()}


def opening() -> dict:
    """The demo data's sizes, the files that need numpy, those that need PyTorch too (``*_torch.py``)."""
    q = att.as_matrix(att.DEMO_Q, "Q")
    k = att.as_matrix(att.DEMO_K, "K")
    v = att.as_matrix(att.DEMO_V, "V")
    needed = numpy_needed()
    plain = [n for n in needed if not take_home.needs_torch(n)]
    torch_files = [n for n in needed if take_home.needs_torch(n)]
    claim(
        bool(plain) and bool(torch_files),
        "少数几个文件另要 numpy 或 PyTorch……要 numpy 才能运行的只有……另要 PyTorch 与 transformers",
    )
    return {
        "n_query": len(q),
        "n_key": len(k),
        "d": len(q[0]),
        "d_v": len(v[0]),
        "numpy_files": "、".join(plain),
        "torch_files": "、".join(torch_files),
        "fig_projections": projection_figure(),
    }


def projection_figure():
    """X times each of W_q, W_k, W_v (the multi-head page's example) gives Q, K, V, drawn as grids."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from chapter.costs import figure_fonts

    mh = importlib.import_module("02_multihead")
    n = len(mh.DEMO_X)
    d_model = len(mh.DEMO_X[0])
    shapes = {
        name: len(w[0]) for name, w in (("Q", mh.DEMO_WQ), ("K", mh.DEMO_WK), ("V", mh.DEMO_WV))
    }
    fonts = {"family": figure_fonts()}
    cell = 0.4
    fig = Figure(figsize=(6.4, 4.6), layout="tight")
    ax = fig.subplots()
    ax.set_axis_off()

    def grid(x0, y0, cols, name, colour):  # n rows; row 0, the one the caption follows, coloured
        for r in range(n):
            for c in range(cols):
                ax.add_patch(
                    Rectangle(
                        (x0 + c * cell, y0 - (r + 1) * cell),
                        cell,
                        cell,
                        linewidth=0.8,
                        facecolor=colour if r == 0 else "#ffffff",
                        edgecolor="#333333",
                    )
                )
        ax.text(
            x0 + cols * cell / 2,
            y0 + 0.25,
            name,
            ha="center",
            va="bottom",
            fontsize=12,
            fontdict=fonts,
        )
        ax.text(
            x0 + cols * cell / 2,
            y0 - n * cell - 0.15,
            f"{n} × {cols}",
            ha="center",
            va="top",
            fontsize=9,
            fontdict=fonts,
        )

    gap = n * cell + 1.0  # one grid and its two labels
    grid(0.0, 0.0, d_model, "X", "#f5d7a1")
    colours = {"Q": "#a9c8ec", "K": "#b8e0b0", "V": "#e7b8c9"}
    x_right = d_model * cell + 3.2
    for row, (name, cols) in enumerate(shapes.items()):
        y = gap * (1 - row)  # Q above X's row, K level with it, V below
        start = (d_model * cell + 0.1, -n * cell / 2)
        end = (x_right - 0.1, y - n * cell / 2)
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "#555555"})
        ax.text(
            start[0] + 0.55 * (end[0] - start[0]),
            start[1] + 0.55 * (end[1] - start[1]) + 0.12,
            f"乘 W_{name.lower()}（{d_model} × {cols}）",
            ha="center",
            va="bottom",
            fontsize=9,
            fontdict=fonts,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )
        grid(x_right, y, cols, name, colours[name])
    ax.text(
        0.0,
        -gap - n * cell - 0.9,
        "着色的一行：X 的第 0 行投影成 Q、K、V 各自的第 0 行",
        fontsize=9,
        fontdict=fonts,
    )
    ax.set_xlim(-0.3, x_right + max(shapes.values()) * cell + 0.3)
    ax.set_ylim(-gap - n * cell - 1.1, gap + 0.7)
    ax.set_aspect("equal")
    return fig
