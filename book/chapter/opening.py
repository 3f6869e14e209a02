"""The chapter opening (book/ch02/index.md): the sizes of its demo data and which teaching files use numpy."""

from __future__ import annotations

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
    ['02_costs.py', '02_exercises_tensors.py', '02_tensors.py', '02_training.py']
    """
    import ast

    if code_dir is not None and not isinstance(code_dir, (str, Path)):
        raise ValueError(f"code_dir 必须是一个文件夹的路径，收到 {code_dir!r}")
    code_dir = CODE_DIR if code_dir is None else Path(code_dir)
    if not code_dir.is_dir():
        raise ValueError(f"code_dir 必须是一个文件夹，收到 {str(code_dir)!r}")
    users = []
    for path in sorted(code_dir.glob("02_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        names += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        if any(name == "numpy" or name.startswith("numpy.") for name in names):
            users.append(path.name)
    return users


def opening() -> dict:
    """The chapter opening (book/ch02/index.md): the sizes of the demo data, and which teaching files use numpy."""
    q, k, v = (att.as_matrix(m, name) for m, name in ((att.DEMO_Q, "Q"), (att.DEMO_K, "K"), (att.DEMO_V, "V")))
    n_query, d, n_key, d_v = len(q), len(q[0]), len(k), len(v[0])
    users = numpy_users()
    return {"n_query": n_query, "n_key": n_key, "d": d, "d_v": d_v,
            "numpy_files": "、".join(users) if users else "没有哪个文件"}
