"""The preface (book/index.md) and the chapter opening (book/ch02/index.md), one page.Section each
(:func:`preface`, :func:`opening`): the facts of the preface's sentence on the recorded library
observations, the sizes of the demo data, which teaching files need numpy or PyTorch (found by running
them) and the projections figure."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import runpy
import sys
from pathlib import Path

from chapter import conventions, fmt
from chapter.page import Section, figure, listing

att = importlib.import_module("02_attention")
CODE_DIR = Path(att.__file__).parent
LIBRARIES = ("numpy", "torch", "transformers")  # what a teaching file may need beyond Python
# transformers cannot be imported without numpy (Transformers 5.17.0 requires it; tests/crosscheck checks
# that where it is installed). The book's build has neither PyTorch nor transformers, so a file that uses
# transformers stops at ``import torch`` before it gets there: the opening counts it among the numpy files
# by its source.


def _ours(name: str, libraries: tuple[str, ...]) -> bool:
    """Whether a loaded module is a teaching file's or one of ``libraries``' (what a run swaps out)."""
    return name.startswith("02_") or name.partition(".")[0] in libraries


@contextlib.contextmanager
def _blocked(libraries: tuple[str, ...], folder: Path):
    """While inside: ``import`` of any of ``libraries`` fails (``None`` in ``sys.modules`` is the documented
    way to make an import fail), and the teaching files are loaded afresh from ``folder``; afterwards the
    modules loaded before are back, as they were."""
    saved = {name: module for name, module in sys.modules.items() if _ours(name, libraries)}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(dict.fromkeys(libraries))
    path = list(sys.path)
    argv = sys.argv
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        for name in [name for name in sys.modules if _ours(name, libraries)]:
            del sys.modules[name]
        sys.modules.update(saved)
        sys.path[:] = path
        sys.argv = argv


def _stops_at(path: Path, libraries: tuple[str, ...]) -> str | None:
    """The library (numpy, torch or transformers) whose import stops a run of ``path`` as ``python path``
    (as ``__main__``, in its folder, its output thrown away) while ``libraries`` are blocked; ``None`` when
    it runs to the end. A library that is not installed stops it too; any other error stops the build."""
    out = io.StringIO()
    with (
        _blocked(libraries, path.parent),
        contextlib.chdir(path.parent),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(out),
    ):
        sys.argv = [str(path)]
        try:
            runpy.run_path(str(path), run_name="__main__")
        except ModuleNotFoundError as error:
            name = (error.name or "").partition(".")[0]
            if name in LIBRARIES:
                return name
            raise ValueError(f"{path.name} 运行时出错，而不是停在导入上：{error}") from error
        except Exception as error:
            raise ValueError(f"{path.name} 运行时出错，而不是停在导入上：{error!r}") from error
    return None


def imports(path: Path, library: str) -> bool:
    """Whether the teaching file at ``path`` imports ``library`` (by its source)."""
    text = path.read_text("utf-8")
    return f"import {library}" in text or f"from {library} " in text


def library_needs(code_dir: Path) -> dict[str, list[str]]:
    """Which teaching files (``code_dir/02_*.py``) need numpy and which need PyTorch, found by running
    each one as a reader would: once with numpy blocked (the files that stop at ``import numpy`` need
    it) and once with torch blocked (those that stop at ``import torch`` or ``transformers`` need
    PyTorch). A file that imports numpy only inside a function it does not call runs, and is not listed.
    Where PyTorch is not installed, a file that imports torch before numpy stops at torch either way:
    :func:`opening` then checks that no such file imports numpy or transformers (which needs numpy)."""
    files = sorted(Path(code_dir).resolve().glob("02_*.py"))
    return {
        "numpy": [path.name for path in files if _stops_at(path, ("numpy",)) == "numpy"],
        "torch": [
            path.name for path in files if _stops_at(path, ("torch",)) in ("torch", "transformers")
        ],
    }


def recorded_conditions(seen: dict) -> dict:
    """What each recorded library observation says about where it was made, per device and library:
    ``{"cpu": {"torch": ["version", "device", "dtype", "kernels"], ...}}``."""
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


# -- the pages' sections ---------------------------------------------------------------------------------
def preface() -> Section:
    """The preface (book/index.md): how the book prints numbers; the facts of its sentence on the record."""
    s = Section("前言", "每个数从哪里来")
    conditions = recorded_conditions(conventions.observed())
    s.holds(
        every_record_has_version_device_dtype=all(
            {"version", "device", "dtype"} <= set(kept)
            for libs in conditions.values()
            for kept in libs.values()
        ),
        torch_records_kernels=all("kernels" in libs["torch"] for libs in conditions.values()),
        jax_records_implementation=all(
            "implementation" in libs["jax"] for libs in conditions.values()
        ),
        keras_records_backend=all("backend" in libs["keras"] for libs in conditions.values()),
    )
    s.text(decimals=fmt.decimals_sentence())
    return s


def opening() -> Section:
    """The demo data's sizes, the files that need numpy (those that use transformers too), those that
    need PyTorch (``*_torch.py``) and those of them that use transformers; the projections figure."""
    s = Section("本章导读", "沿着对象与状态理解本章")
    needs = library_needs(CODE_DIR)
    hf = [name for name in needs["torch"] if imports(CODE_DIR / name, "transformers")]
    numpy_files = sorted({*needs["numpy"], *hf})
    s.holds(
        few_files_need_numpy_or_torch=bool(needs["numpy"]) and bool(needs["torch"]),
        build_has_no_torch_or_transformers=importlib.util.find_spec("torch") is None
        and importlib.util.find_spec("transformers") is None,
        transformers_files_found=bool(hf),
        costs_tiles_mask_exercises_use_numpy_only_in_a_function=all(
            name not in needs["numpy"] and imports(CODE_DIR / name, "numpy")
            for name in ("02_costs.py", "02_tiles.py", "02_exercises_mask.py")
        ),
        tensors_torch_file_needs_numpy="02_tensors_torch.py" in needs["numpy"],
        # Without PyTorch installed, a file that imports torch first stops there either way.
        torch_only_files_import_neither_numpy_nor_transformers=not any(
            imports(CODE_DIR / name, "numpy") or imports(CODE_DIR / name, "transformers")
            for name in needs["torch"]
            if name not in numpy_files
        ),
    )
    s.value(
        "count",
        n_query=len(att.DEMO_Q),
        n_key=len(att.DEMO_K),
        d=len(att.DEMO_Q[0]),
        d_v=len(att.DEMO_V[0]),
    )
    s.text(
        numpy_files=listing(numpy_files),
        torch_files=listing(needs["torch"]),
        transformers_files=listing(hf),
    )
    s.figure("fig_projections", projection_figure())
    return s


def projection_figure():
    """X times each of W_q, W_k, W_v (the multi-head page's example) gives Q, K, V, drawn as grids; the
    book's figure factory (``page.figure``) gives the figure, every text names its font family."""
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
    with figure((6.4, 4.6), "opening-projections") as (fig, frame):  # stable SVG ids
        fig.delaxes(frame)
        fig.set_layout_engine("tight")
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
