"""A page's downloads, made at build time from ``code/``: ``ch02_<page>.zip`` and ``ch02_<page>.ipynb``."""

from __future__ import annotations

import ast
import importlib
import re
import zipfile
from pathlib import Path

CODE = Path(importlib.import_module("02_attention").__file__).parent
PYTHON = "3.11"  # the oldest Python the teaching code is run with (README.md)
IMPORT = re.compile(r'import_module\("(02_\w+)"\)')
# The page's teaching file (the one 完整教学代码 shows), in the chapter's reading order.
TEACHING = {
    "mask": "02_attention.py",
    "scaling": "02_scaling.py",
    "multihead": "02_multihead.py",
    "rope": "02_rope.py",
    "backprop": "02_backprop.py",
    "training": "02_training.py",
    "costs": "02_costs.py",
    "tensors": "02_tensors.py",
    "tiles": "02_tiles.py",
    "pitfalls": "02_pitfalls.py",
}
# A teaching file's companion ``<stem>_torch.py`` needs PyTorch (.pytest.ini's rule): it goes into the zip
# and the README says so; the notebook never uses it, and `make crosscheck` runs it.
TORCH_SUFFIX = "_torch.py"


def needs_torch(name: str) -> bool:
    """Whether a teaching file needs PyTorch, by the naming rule."""
    return name.endswith(TORCH_SUFFIX)


def imports(name: str, code: Path = CODE) -> list[str]:
    """The files of ``code/`` that ``name`` needs beside it, itself first, then what it imports, in order."""
    found = [name]
    for file in found:  # grows while it is read: each new file's own imports are followed too
        for module in IMPORT.findall((code / file).read_text(encoding="utf-8")):
            if f"{module}.py" not in found:
                found.append(f"{module}.py")
    return found


def files(page: str, code: Path = CODE) -> list[str]:
    """Every file of the page's zip but its README: the teaching file, the answers, what both import.

    >>> files("scaling")
    ['02_scaling.py', '02_attention.py', '02_exercises_scaling.py']
    """
    if page not in TEACHING:
        raise ValueError(f"page 必须是 {'、'.join(TEACHING)} 之一，收到 {page!r}")
    out = []
    companion = TEACHING[page].replace(".py", TORCH_SUFFIX)
    for name in (TEACHING[page], f"02_exercises_{page}.py", companion):
        if (code / name).is_file():
            out += [f for f in imports(name, code) if f not in out]
    return out


zip_name = "ch02_{}.zip".format
notebook_name = "ch02_{}.ipynb".format  # a page's two downloads


def _numpy_imports(tree: ast.AST) -> bool:
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    return any(name.split(".")[0] == "numpy" for name in names)


def numpy_use(name: str, code: Path = CODE) -> tuple[bool, list[str]]:
    """Where a file of ``code/`` needs numpy: ``(True, [])`` when loading it imports numpy (itself or a
    file it imports); else ``(False, functions)``, its public functions that import numpy when called.

    >>> numpy_use("02_training.py")
    (True, [])
    >>> numpy_use("02_scaling.py")
    (False, [])
    >>> numpy_use("02_costs.py")
    (False, ['numpy_attention', 'time_attention'])
    """
    tree = ast.parse((code / name).read_text(encoding="utf-8"))
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    module = [n for n in tree.body if n not in functions and not isinstance(n, ast.ClassDef)]
    if any(_numpy_imports(n) for n in module) or any(
        numpy_use(f, code)[0] for f in imports(name, code)[1:]
    ):
        return True, []
    return False, [f.name for f in functions if not f.name.startswith("_") and _numpy_imports(f)]


def readme(page: str, title: str, code: Path = CODE) -> str:
    """The zip's README.txt: what each file is, how to run it, what it needs."""
    names = files(page, code)
    use = {name: numpy_use(name, code) for name in names if not needs_torch(name)}
    at_load = [name for name, (loads, _) in use.items() if loads]
    when_called = [
        f"{name} 的 {'、'.join(functions)}" for name, (_, functions) in use.items() if functions
    ]
    lines = [
        f"《手算注意力与因果掩码》第 2 章：{title}",
        "",
        "这个压缩包里的文件放在同一个文件夹里就能运行，不需要别的文件：",
        "",
    ]
    for name in names:
        first = (code / name).read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
        lines.append(f"  {name}  {first}")
    lines += [
        "",
        f"  {notebook_name(page)}（另一个下载）  本页的例子与练习，放进同一个文件夹，用 Jupyter 打开。",
        "",
        "运行：在这个文件夹里执行",
        "",
    ]
    lines += [f"  python3 {name}" for name in (TEACHING[page], f"02_exercises_{page}.py")]
    needs = f"需要 Python {PYTHON} 或更新的版本"
    if at_load:
        needs += f"，以及 numpy（{'、'.join(at_load)} 要用它）。"
    else:
        needs += "；只用 Python 标准库。"
    if when_called:
        needs += f"只有调用 {'；'.join(when_called)} 时才要 numpy。"
    lines += ["", "每个文件先自检，再以 JSON 打印结果。", needs, ""]
    for name in filter(needs_torch, names):
        hf = (
            "与 transformers" if "transformers" in (code / name).read_text(encoding="utf-8") else ""
        )
        lines += [
            f"{name} 另要 PyTorch（CPU 版即可）{hf}，notebook 不用它。装好之后运行：",
            "",
            f"  python3 {name}",
            "",
        ]
    return "\n".join(lines)


def write_zip(page: str, title: str, folder: Path, code: Path = CODE) -> Path:
    """Write the page's zip into ``folder``; the same files give the same bytes (fixed dates)."""
    path = Path(folder) / zip_name(page)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in files(page, code):
            z.writestr(
                zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)),
                (code / name).read_text(encoding="utf-8"),
            )
        z.writestr(
            zipfile.ZipInfo("README.txt", date_time=(2026, 1, 1, 0, 0, 0)),
            readme(page, title, code),
        )
    return path


# -- the notebooks' worked examples ------------------------------------------------------------------------
# Each page's example: ``intro`` (what the inputs are, which edits to try), the ``inputs`` cell the reader
# edits, the ``run`` cell that prints what the page shows for those inputs (the same numbers, units and
# rounding), and ``edits``: the changes the intro suggests, each an (old, new) replacement in the inputs
# cell (tests/test_take_home.py makes each one and runs the notebook again).
def _mask_example(att) -> dict:
    return {
        "intro": "输入与本页“一步一步”一节相同：三个有效位置，没有缓存，没有 PAD，使用因果规则。"
        "改下面一格里的 `q`、`k`、`v`（或把 `causal` 改成 `False`），再从这一格往下运行。",
        "inputs": f"q = {att.DEMO_Q!r}\nk = {att.DEMO_K!r}\nv = {att.DEMO_V!r}\ncausal = True",
        "run": "weights, outputs = att.attention(q, k, v, causal=causal)\n"
        "for i, (row, out) in enumerate(zip(weights, outputs)):\n"
        '    print(f"绝对位置 {i}：权重", [format(w, ".4f") for w in row], "输出", format(out[0], ".4f"))',
        "edits": [("causal = True", "causal = False")],
    }


def _scaling_example(sc) -> dict:
    q = sc.EXAMPLE_Q[sc.QUERY]
    k = sc.EXAMPLE_K
    v = sc.EXAMPLE_V
    return {
        "intro": "输入与本页 F13 相同：一个查询行，三个 Key 和它们的 V，不加 mask。"
        "改下面一格里的 `q`、`k`、`v`，再从这一格往下运行，看点积、缩放、权重和输出怎样变。",
        "inputs": f"q = {q!r}\nk = {k!r}\nv = {v!r}",
        "run": "s = sc.visible_steps(q, k, v)\n"
        'for name in ("dots", "scaled", "shifted", "weights", "output"):\n'
        '    print(name, [format(x, ".4f") for x in s[name]])',
        "edits": [(f"q = {q!r}", f"q = {[2 * x for x in q]!r}")],
    }


def _multihead_example(mh) -> dict:
    x, w_q, w_k, w_v, w_o = mh.DEMO
    return {
        "intro": "输入与本页“从 X 到输出”一节相同：X 与四个权重矩阵，两个头，因果规则。"
        "改 `heads`（要能整除 X 的列数）或矩阵里的数，再运行。",
        "inputs": f"x = {x!r}\nw_q = {w_q!r}\nw_k = {w_k!r}\nw_v = {w_v!r}\nw_o = {w_o!r}\n"
        f"heads = {mh.DEMO_HEADS}",
        "run": "weights, output = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)\n"
        "for i, row in enumerate(output):\n"
        '    print(f"位置 {i} 的输出", [format(c, ".4f") for c in row])',
        "edits": [(f"heads = {mh.DEMO_HEADS}", "heads = 1")],
    }


def _rope_example(rope) -> dict:
    m, n = rope.D2_FIRST
    shift = rope.D2_SHIFT
    q = rope.DEMO_Q2
    k = rope.DEMO_K2
    return {
        "intro": "输入与本页 d = 2 的例子相同：一对查询与键，先放在位置 m、n，再把两个位置都加上同一个数。"
        "改 `m`、`n` 或 `shift`，看分数只随位置差变。",
        "inputs": f"q = {q!r}\nk = {k!r}\nm, n = {m}, {n}\nshift = {shift}",
        "run": "for a, b in ((m, n), (m + shift, n + shift)):\n"
        "    score = rope.rope_scores([q], [k], [a], [b])[0][0]\n"
        '    print(f"位置 {a}、{b}：位置差 {a - b}，分数", format(score, ".4f"))',
        "edits": [(f"m, n = {m}, {n}", f"m, n = {m + 1}, {n}")],
    }


def _backprop_example(bp) -> dict:
    q = bp.EXAMPLE_Q
    k = bp.EXAMPLE_K
    v = bp.EXAMPLE_V
    d_out = bp.EXAMPLE_D_OUT
    return {
        "intro": "输入与本页“按推导顺序”一节相同：三个位置，因果规则，给定的上游梯度 dO。"
        "改 `q`、`k`、`v` 或 `d_out`，再运行，比较手推的梯度和有限差分。",
        "inputs": f"q = {q!r}\nk = {k!r}\nv = {v!r}\nd_out = {d_out!r}",
        "run": "dq, dk, dv = bp.attention_backward(q, k, v, d_out)\n"
        'for name, m in (("dQ", dq), ("dK", dk), ("dV", dv)):\n'
        '    print(name, [[format(x, ".4f") for x in row] for row in m])\n'
        'print("梯度检查通过：", bp.gradient_check(q, k, v, d_out)["passed"])',
        "edits": [(f"d_out = {d_out!r}", f"d_out = {[[-x for x in row] for row in d_out]!r}")],
    }


def _training_example(tr) -> dict:
    from chapter import training as page

    return {
        "intro": "输入与本页相同：同一个任务、同样的步数与种子，训练一个加因果规则的模型和一个不加规则的模型，"
        f"训练损失取最后 {page.ex.TAIL} 步的平均（与本页的表相同），再逐词算（带 KV 缓存）看使用时的损失。"
        "改 `steps` 或种子，再运行（训练要几秒）。",
        "inputs": f"train_seed = {page.TRAIN_SEED}\neval_seed = {page.EVAL_SEED}\nsteps = {tr.STEPS}\n"
        f"last = {page.ex.TAIL}  # 训练损失：最后 last 步的平均（一步的批有噪声）",
        "run": "def loss(x):\n"
        "    # 与书页相同：四位小数；四位小数写成 0 的非零数用科学记数法\n"
        '    return format(x, ".4f") if x == 0 or abs(x) >= 5e-5 else format(x, ".1e")\n'
        "\n\n"
        "for rule in tr.RULES:\n"
        "    run = tr.train(rule, seed=train_seed, steps=steps)\n"
        '    use = tr.use_time(run["params"], rule, seed=eval_seed)\n'
        '    train_loss = sum(run["train_loss"][-last:]) / last\n'
        '    print(rule, f"训练损失（最后 {last} 步的平均）", loss(train_loss),\n'
        '          "逐词算的平均损失", loss(use["mean_loss"]))',
        "edits": [(f"steps = {tr.STEPS}", "steps = 50")],
    }


def _costs_example(costs) -> dict:
    return {
        "intro": "输入与本页 KV 缓存一节相同：四个公开模型的配置、同样的上下文长度与批大小，每元素 2 字节。"
        "改 `context` 或 `batch`，再运行（上下文超过某个模型的最大位置数时，打印 `kv_cache_bytes` 报的错）。",
        "inputs": f"context = {costs.CONTEXT}\nbatch = {costs.BATCH}",
        "run": "def size(n):\n"
        "    # 与书页的表相同：二进制单位（1 KiB = 1024 字节），至多两位小数\n"
        '    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):\n'
        '        if n < 1024 or unit == "TiB":\n'
        '            return format(n, ".2f").rstrip("0").rstrip(".") + " " + unit\n'
        "        n = n / 1024\n"
        "\n\n"
        "for model in costs.MODELS:\n"
        "    per_token = costs.kv_cache_bytes(model, 1)\n"
        "    try:\n"
        "        total = costs.kv_cache_bytes(model, context, batch)\n"
        "    except ValueError as error:  # context 超过了这个模型的最大位置数\n"
        "        print(error)\n"
        "        continue\n"
        "    print(\n"
        "        f\"{model['name']}：每 token {size(per_token)}；\"\n"
        '        f"上下文 {context}、批大小 {batch}：{size(total)}"\n'
        "    )",
        "edits": [
            (f"batch = {costs.BATCH}", f"batch = {costs.BATCH * 8}"),
            (f"context = {costs.CONTEXT}", f"context = {costs.CONTEXT // 2}"),
        ],
    }


def _tensors_example(tn) -> dict:
    mask = [list(map(int, row)) for row in tn.DEMO_MASK]
    edited = [[0] * 3 + row[3:] if b == 1 else row for b, row in enumerate(mask)]
    return {
        "intro": "输入与本页整批的例子相同：两个序列，左侧补了 PAD，缓存里已有几个位置，分组的 K/V 头。"
        "改 `attention_mask` 里的 0 和 1（1 是内容，0 是 PAD；例如让序列 1 也以 PAD 开头），再运行，"
        "看位置编号和每个新查询可读的 Key 怎样变。past 不能单独改：它等于 K 的位置数减去 Q 的新查询数，"
        "由 `demo_inputs()` 造出的形状定下。",
        "inputs": f'inputs = tn.demo_inputs()\ninputs["attention_mask"] = {mask!r}\n'
        'print("past =", inputs["past"])',
        "run": "r = tn.forward(inputs)\n"
        'for b, positions in enumerate(r["positions"]):\n'
        '    print(f"序列 {b}：位置编号", "、".join(str(int(p)) for p in positions))\n'
        '    for i, row in enumerate(r["visible"][b, 0]):\n'
        '        keys = "、".join(str(j) for j, ok in enumerate(row) if ok) or "无"\n'
        "        print(f\"  查询 {i}：绝对位置 {inputs['past'] + i}，可读的 Key {keys}（{int(row.sum())} 个）\")",
        "edits": [
            (f'inputs["attention_mask"] = {mask!r}', f'inputs["attention_mask"] = {edited!r}')
        ],
    }


def _tiles_example(tl) -> dict:
    return {
        "intro": "输入与本页“一行分数，一块一块地读”一节相同：一行分数、只有一列的 V 和块的大小。"
        "改 `scores`、`v` 或 `block`，再运行，看每读完一块后的 m、l、O 怎样变，输出是否仍等于一次算完的。",
        "inputs": f"scores = {tl.ROW_SCORES!r}\nv = {tl.ROW_V!r}\nblock = {tl.ROW_BLOCK}",
        "run": "r = tl.online_row(scores, v, block)\n"
        'for b, (m, l, o) in enumerate(r["trace"], start=1):\n'
        '    print(f"读完块 {b}：m =", format(m, ".4f"), "l =", format(l, ".4f"), "O =", format(o[0], ".4f"))\n'
        'print("O / l =", format(r["output"][0], ".4f"))',
        "edits": [(f"block = {tl.ROW_BLOCK}", f"block = {tl.ROW_BLOCK + 1}")],
    }


def _pitfalls_example(pf) -> dict:
    n = len(pf.DEMO_Q)
    return {
        "intro": "输入与本页各节共用的例子相同：四个位置，Q = K，V 一列。`bias` 是 "
        "`torch.tril(torch.ones(n, n))` 那样的 0/1 表，像浮点 mask 一样加到分数上。把它换成 "
        '`[[0.0 if ok else float("-inf") for ok in row] for row in pf.causal_table(4)]`'
        "（0/−∞），再运行，看位置 0 落在未来的权重变成 0。",
        "inputs": f"q = k = {pf.DEMO_Q!r}\nv = {pf.DEMO_V!r}\nbias = pf.tril({n})",
        "run": "weights, outputs = pf.biased_attention(q, k, v, bias)\n"
        "for i, (row, out) in enumerate(zip(weights, outputs)):\n"
        '    print(f"位置 {i}：落在未来的权重", format(sum(row[i + 1 :]), ".4f"), '
        '"输出", format(out[0], ".4f"))',
        "edits": [
            (
                f"bias = pf.tril({n})",
                f'bias = [[0.0 if ok else float("-inf") for ok in row] for row in pf.causal_table({n})]',
            )
        ],
    }


# Each page's example, built from its teaching module under the name the notebook imports it as.
EXAMPLES = {
    "mask": ("att", _mask_example),
    "scaling": ("sc", _scaling_example),
    "multihead": ("mh", _multihead_example),
    "rope": ("rope", _rope_example),
    "backprop": ("bp", _backprop_example),
    "training": ("tr", _training_example),
    "costs": ("costs", _costs_example),
    "tensors": ("tn", _tensors_example),
    "tiles": ("tl", _tiles_example),
    "pitfalls": ("pf", _pitfalls_example),
}


def example(page: str) -> dict | None:
    """The page's worked example for its notebook: intro, input and run cells, its edits, its import."""
    if page not in EXAMPLES:
        return None
    alias, build = EXAMPLES[page]
    module = TEACHING[page].removesuffix(".py")
    return {**build(importlib.import_module(module)), "module": (alias, module)}


def notebook(page: str, title: str, exercises: list[tuple[str, str]]):
    """The page's notebook: the worked example (inputs, run), then each exercise's task and an empty cell."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}\n\n这个 notebook 与 `{zip_name(page)}` 里的文件放在同一个文件夹里运行（它从那里导入教学代码）。"
            "它不存任何输出：从上到下运行一遍，打印的数就是书页上的数；改一个输入，再运行，数就跟着变。"
        )
    ]
    ex = example(page)
    if ex is not None:
        alias, module = ex["module"]
        cells += [
            nbformat.v4.new_code_cell(
                f'import importlib\n\n{alias} = importlib.import_module("{module}")'
            ),
            nbformat.v4.new_markdown_cell("## 例子\n\n" + ex["intro"]),
            nbformat.v4.new_code_cell(ex["inputs"]),
            nbformat.v4.new_code_cell(ex["run"]),
        ]
    for name, task in exercises:
        cells += [
            nbformat.v4.new_markdown_cell(f"## {name}\n\n{task}"),
            nbformat.v4.new_code_cell(""),
        ]
    nb.cells = cells
    for i, cell in enumerate(nb.cells):  # stable ids: the same page gives the same file
        cell["id"] = f"{page}-{i}"
    return nb


def write_notebook(page: str, title: str, exercises: list[tuple[str, str]], folder: Path) -> Path:
    import nbformat

    path = Path(folder) / notebook_name(page)
    nbformat.write(notebook(page, title, exercises), str(path))
    return path
