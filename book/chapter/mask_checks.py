"""The mask page's checks (如何判断是否做对), defined once: the mask page runs them on its three
algorithms, the summary page on the chapter's mistakes.

- 不泄漏: change the V of the keys a query must not read; that query's output must not move.
- 与整段重算一致: the rows computed with a cache equal the same rows of a *correct* full recomputation
  (``attention`` of 02_attention.py: the causal and PAD rules, no cache), never the checked code's own.
- 权重有限: every weight is a finite number, and every row that may read a key sums to 1.

An attention under check is a function ``run(q, k, v)`` that returns the output rows of the queries
``q`` (with a cache, ``q`` holds the new queries only and ``k``, ``v`` the cached keys too).
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
TOLERANCE = 1e-12  # a row of weights "sums to 1" within this


def same_row(a: list[float], b: list[float]) -> bool:
    """Two output rows are the same: equal entry by entry, NaN counted equal to NaN.

    A NaN row is not a leak (the poisoned V did not move it): the weights check catches it.
    """
    a = [att.real(x, f"a[{j}]") for j, x in enumerate(att.as_list(a, "a"))]
    b = [att.real(x, f"b[{j}]") for j, x in enumerate(att.as_list(b, "b"))]
    if len(a) != len(b):
        raise ValueError(f"a 与 b 的长度必须相同，收到 {len(a)} 与 {len(b)}")
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def after_query(n_query: int, n_key: int, past: int = 0) -> list[list[bool]]:
    """The keys each query must not read under the causal rule: those after its position ``past + i``."""
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    return [[j > past + i for j in range(n_key)] for i in range(n_query)]


def pad_keys(key_valid: list[bool], n_query: int) -> list[list[bool]]:
    """The keys every query must not read under the PAD rule: the PAD keys (``key_valid`` False)."""
    key_valid = att.flags(key_valid, "key_valid")
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    return [[not ok for ok in key_valid] for _ in range(n_query)]


def _callable(run: object) -> None:
    if not callable(run):
        raise ValueError(f"run 必须是一个函数 run(q, k, v)，收到 {type(run).__name__}")


def _rows(outputs: object, n: int) -> list:
    """What ``run`` returned, as its ``n`` output rows (one per query)."""
    rows = att.as_list(outputs, "run 的返回值")
    if len(rows) != n:
        raise ValueError(f"run 必须为每个查询返回一行输出（{n} 行），收到 {len(rows)} 行")
    return rows


def leak_probe(run, q, k, v, forbidden: list[list[bool]], poison: float) -> dict:
    """不泄漏: for each query row, the V of the keys it must not read set to ``poison``; its output again.

    Returns the outputs, each row's output after its probe, and the rows that moved (``leaking``).
    """
    _callable(run)
    q = att.as_matrix(q, "Q")
    v = att.as_matrix(v, "V")
    poison = att.real(poison, "poison")
    forbidden = [
        att.flags(row, f"forbidden[{i}]", len(v))
        for i, row in enumerate(att.as_list(forbidden, "forbidden"))
    ]
    if len(forbidden) != len(q):
        raise ValueError(f"forbidden 必须有 {len(q)} 行（每个查询一行），收到 {len(forbidden)}")
    outputs = _rows(run(q, k, v), len(q))
    probed = []
    for i, row in enumerate(forbidden):
        if any(row):
            changed = [[poison] * len(vj) if row[j] else vj for j, vj in enumerate(v)]
            probed.append(_rows(run(q, k, changed), len(q))[i])
        else:  # nothing this row must not read: nothing to change
            probed.append(outputs[i])
    leaking = [i for i, (a, b) in enumerate(zip(outputs, probed)) if not same_row(a, b)]
    return {"outputs": outputs, "probed": probed, "leaking": leaking}


def recompute_check(
    run, q_full, k, v, past: int, key_valid: list[bool] | None = None, tolerance: float = TOLERANCE
) -> dict:
    """与整段重算一致: ``run`` on the new queries ``q_full[past:]`` (with a cache of ``past`` positions)
    against the correct full recomputation's same rows (causal rule, ``key_valid``, fully masked rows 0).

    Returns both and the new rows that differ by more than ``tolerance`` (``differ``, counted from the
    first new query): code that sums in another order (in tiles, say) differs in the last bits only.
    """
    _callable(run)
    q_full = att.as_matrix(q_full, "q_full")
    if len(q_full) < 2:
        raise ValueError(f"q_full 至少要有两行（缓存里的与新来的），收到 {len(q_full)} 行")
    att.check_count(past, "past", minimum=1, maximum=len(q_full) - 1, why="至少留一个新查询")
    _, full = att.attention(q_full, k, v, key_valid=key_valid, empty_row="zero")
    reference = full[past:]
    outputs = _rows(run(q_full[past:], k, v), len(reference))
    tolerance = att.real(tolerance, "tolerance")
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance 必须在 0 与 1 之间，收到 {tolerance!r}")
    differ = [
        i
        for i, (a, b) in enumerate(zip(outputs, reference))
        if not same_row(a, b)
        and not all(abs(x - y) <= tolerance for x, y in zip(a, b))  # NaN is never within it
    ]
    return {"outputs": outputs, "reference": reference, "differ": differ}


def weights_check(weights: list[list[float]], visible: list[list[bool]]) -> list[int]:
    """权重有限: the rows whose weights are not all finite, or that may read a key (``visible``, the
    correct table) and do not sum to 1."""
    rows = [
        [att.real(w, f"weights[{i}][{j}]") for j, w in enumerate(att.as_list(row, f"weights[{i}]"))]
        for i, row in enumerate(att.as_list(weights, "weights"))
    ]
    visible = [
        att.flags(row, f"visible[{i}]") for i, row in enumerate(att.as_list(visible, "visible"))
    ]
    if len(rows) != len(visible):
        raise ValueError(f"weights 与 visible 的行数必须相同，收到 {len(rows)} 与 {len(visible)}")
    return [
        i
        for i, (row, may) in enumerate(zip(rows, visible))
        if not all(math.isfinite(w) for w in row) or (any(may) and abs(sum(row) - 1.0) > TOLERANCE)
    ]
