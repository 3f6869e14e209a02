"""第 2 章教学代码：写进真实代码——同样的错误交给 PyTorch 与 Transformers（需要 PyTorch）。

要 PyTorch（CPU 版即可），最后两节另要 transformers；与 ``02_attention.py``、``02_rope.py``、
``02_pitfalls.py`` 放在同一目录运行。每个函数先照错的写法调用一次库，再照改对的写法调用一次，
返回看到的数；``02_pitfalls.py`` 用前几页的函数把同样的数算出来。小模型由配置造出，权重是随机的，
不下载任何东西。一律 float64、CPU。
"""

import importlib
import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # 从不联网：模型只由配置造出

import torch
import torch.nn.functional as F

att = importlib.import_module("02_attention")
pf = importlib.import_module("02_pitfalls")  # 例子的输入，和用前几页的函数算出的参照

DTYPE = torch.float64
SEED = 2  # 小模型的随机权重与 dropout 的取样都从这个种子开始
INIT = 0.5  # 权重的标准差：比默认的 0.02 大，注意力才不是平均分配，位置才看得出作用


def _t(x) -> torch.Tensor:
    return torch.tensor(x, dtype=DTYPE)


def _rows(x: torch.Tensor) -> list:
    """输出的第一列，一行一个数；NaN 写成 None（JSON 里是 null）。"""
    return [None if v != v else v for v in x.reshape(x.shape[-2], -1)[:, 0].tolist()]


def _identity_mha(width: int, heads: int) -> torch.nn.MultiheadAttention:
    """投影都是单位矩阵、没有偏置的 MultiheadAttention：它算的就是缩放点积注意力本身。"""
    layer = torch.nn.MultiheadAttention(width, heads, bias=False, batch_first=True, dtype=DTYPE)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.eye(width, dtype=DTYPE).repeat(3, 1))
        layer.out_proj.weight.copy_(torch.eye(width, dtype=DTYPE))
    return layer.eval()


# 例子：四个位置，Q = K（二维），V 一列；MultiheadAttention 要 V 与 Q 同宽，补一列 0
Q = _t(pf.DEMO_Q)  # (n, 2)
V = _t(pf.DEMO_V)  # (n, 1)
V2 = torch.cat([V, torch.zeros_like(V)], dim=-1)  # (n, 2)：第一列就是 V
N = Q.shape[0]


@torch.no_grad()
def polarity() -> dict:
    """同一张 True = 允许的因果表，交给 SDPA（读对）与 MultiheadAttention（True 读成禁止）。"""
    allowed = torch.tril(torch.ones(N, N, dtype=torch.bool))  # True = 可以读
    sdpa = F.scaled_dot_product_attention(Q, Q, V, attn_mask=allowed)
    layer = _identity_mha(2, 1)
    wrong, weights = layer(Q[None], Q[None], V2[None], attn_mask=allowed)  # 错：读成了禁止
    fixed, _ = layer(Q[None], Q[None], V2[None], attn_mask=~allowed)  # 改：MHA 要 True = 禁止
    return {
        "sdpa": _rows(sdpa),
        "mha": _rows(wrong),
        "mha_nan_rows": weights[0].isnan().any(-1).nonzero().flatten().tolist(),
        "mha_fixed": _rows(fixed),
    }


@torch.no_grad()
def float_mask() -> dict:
    """``torch.tril(torch.ones(n, n))`` 是浮点表：SDPA 把它加到分数上，不是拿来挡格子。"""
    ones = torch.ones(N, N, dtype=DTYPE)  # 与 Q、K、V 同一 dtype（SDPA 要浮点 mask 与它们同类型）
    wrong = F.scaled_dot_product_attention(Q, Q, V, attn_mask=torch.tril(ones))
    fixed = F.scaled_dot_product_attention(
        Q, Q, V, attn_mask=torch.tril(torch.ones(N, N, dtype=torch.bool))
    )
    return {"wrong": _rows(wrong), "fixed": _rows(fixed)}


def masked_fill_lines(scores: torch.Tensor) -> dict:
    """四种常见的写法：同样的 tril、triu，配上 ``== 0`` 或 ``.bool()``，挡住的格子各不相同。
    >>> masked_fill_lines(torch.zeros(2, 2))["tril.bool()"].tolist()
    [[-inf, 0.0], [-inf, -inf]]
    """
    if not isinstance(scores, torch.Tensor) or scores.ndim != 2 or not scores.is_floating_point():
        raise ValueError(f"scores 必须是二维的浮点张量 (n, n)，收到 {scores!r}")
    if scores.shape[0] != scores.shape[1] or scores.shape[0] == 0:
        shape = tuple(scores.shape)
        raise ValueError(f"scores 必须是非空的方阵（查询与 Key 一样多），收到形状 {shape}")
    n = scores.shape[-1]
    ones = torch.ones(n, n)
    inf = float("-inf")
    return {
        "tril == 0": scores.masked_fill(torch.tril(ones) == 0, inf),  # 对：挡住未来
        "tril.bool()": scores.masked_fill(torch.tril(ones).bool(), inf),  # 挡住了过去和自己
        "triu(1).bool()": scores.masked_fill(torch.triu(ones, diagonal=1).bool(), inf),  # 对
        "triu.bool()": scores.masked_fill(torch.triu(ones).bool(), inf),  # 连自己也挡住
    }


@torch.no_grad()
def lines() -> dict:
    """每种写法之后做 softmax：每行读到几个 Key（权重不为 0 的格子），哪些行成了 NaN。"""
    scores = Q @ Q.T / Q.shape[-1] ** 0.5  # (n, n)
    out = {}
    for name, filled in masked_fill_lines(scores).items():
        weights = torch.softmax(filled, dim=-1)
        out[name] = {
            "read": (weights > 0).sum(-1).tolist(),
            "nan_rows": weights.isnan().any(-1).nonzero().flatten().tolist(),
        }
    return out


@torch.no_grad()
def causal_and_mask() -> dict:
    """``is_causal=True`` 与 ``attn_mask`` 一起给：SDPA 报错；MultiheadAttention 走慢路径、
    不返回权重、又没给 key_padding_mask 时丢掉了 attn_mask（PAD 规则也跟着丢了）。
    例子里位置 0 是 PAD（左侧补齐）。另记快路径上单给 is_causal、不给 attn_mask：不挡未来。"""
    valid = torch.tensor([False, True, True, True])
    allowed = torch.tril(torch.ones(N, N, dtype=torch.bool)) & valid  # 因果且不是 PAD
    try:
        F.scaled_dot_product_attention(Q, Q, V, attn_mask=allowed, is_causal=True)
        sdpa = "ran"
    except RuntimeError as error:
        sdpa = str(error)
    layer = _identity_mha(2, 1)  # 一个头、没有偏置、V 与 Q 不是同一个张量：走慢路径
    hinted, _ = layer(
        Q[None], Q[None], V2[None], attn_mask=~allowed, is_causal=True, need_weights=False
    )  # 错：两样都给
    # 快路径（torch._native_multi_head_attention）的条件由 forward 里的 why_not_fast_path 逐条检查，
    # 这一层满足的有：有偏置、头数为偶数、batch_first=True、成批的三维输入、query is key is value、
    # 布尔 mask、eval() 且不求导。它合并 attn_mask 与 key_padding_mask，不看 is_causal。
    fast = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=DTYPE)
    with torch.no_grad():
        fast.in_proj_weight.copy_(torch.eye(4, dtype=DTYPE).repeat(3, 1))
        fast.in_proj_bias.zero_()
        fast.out_proj.weight.copy_(torch.eye(4, dtype=DTYPE))
        fast.out_proj.bias.zero_()
    x = torch.cat([Q, Q], dim=-1)[None]  # (1, n, 4)：两个头都是 Q，V 也是它
    paths = {}
    for path, training in (("fast", False), ("slow", True)):  # dropout 为 0：只换路径
        out, _ = fast.train(training)(
            x, x, x, attn_mask=~allowed, is_causal=True, need_weights=False
        )
        paths[path] = _rows(out)
    # 单给 is_causal、不给 attn_mask：慢路径报错（约定表），快路径不理它
    out, _ = fast.eval()(x, x, x, is_causal=True, need_weights=False)
    paths["fast_is_causal_alone"] = _rows(out)
    seq_first = torch.nn.MultiheadAttention(4, 2, dtype=DTYPE)  # 默认 batch_first=False，其余相同
    seq_first.load_state_dict(fast.state_dict())
    xs = x.transpose(0, 1)  # (n, 1, 4)：序列在前；query、key、value 仍是同一个张量
    out, _ = seq_first.eval()(xs, xs, xs, attn_mask=~allowed, is_causal=True, need_weights=False)
    paths["batch_first_false"] = _rows(out.transpose(0, 1))  # eval() 里也走慢路径
    return {
        "sdpa": sdpa,
        "mha": _rows(hinted),
        "valid": valid.tolist(),
        "self_attention_v_is_q": paths,
    }


@torch.no_grad()
def head_order() -> dict:
    """三维 attn_mask (batch·heads, n, n)：``repeat`` 与 ``repeat_interleave`` 复制的顺序不同。
    每个 (序列, 头) 的输出与 key_padding_mask 的结果之差。"""
    heads = 2
    x = torch.cat([Q, Q.flip(0)], dim=-1)  # (n, 4)：两个头各两维，头 1 的行倒过来排
    x = torch.stack([x, x])  # (batch, n, 4)：两个序列的内容相同，只有 PAD 不同
    valid = torch.tensor([[True, True, True, False], [True, True, False, False]])
    blocked = (~valid)[:, None, :].expand(-1, N, -1)  # (batch, n, n)：每行都挡住 PAD 的列
    layer = _identity_mha(4, heads)
    reference, _ = layer(x, x, x, key_padding_mask=~valid, need_weights=False)
    out = {}
    for name in pf.LAYOUTS:
        if name == "repeat":
            mask = blocked.repeat(heads, 1, 1)  # 错：[表 0, 表 1, 表 0, 表 1]
        else:
            mask = blocked.repeat_interleave(heads, dim=0)  # 对：[表 0, 表 0, 表 1, 表 1]
        got, _ = layer(x, x, x, attn_mask=mask, need_weights=False)
        gaps = (got - reference).abs().unflatten(-1, (heads, -1)).amax(dim=(1, 3))  # (batch, heads)
        out[name] = gaps.tolist()
    return {"valid": valid.tolist(), **out}


@torch.no_grad()
def padding_axis() -> dict:
    """PAD 表 unsqueeze 错了一轴，成了 (B, 1, n, 1)：挡住的是 PAD 的查询行，内容行照读 PAD。
    MultiheadAttention 里行与列都挡：PAD 查询整行被屏蔽。例子里位置 3 是 PAD（右侧补齐）。"""
    valid = torch.tensor([pf.DEMO_VALID])  # (B, n)
    q = Q[None, None]
    v = V[None, None]  # (B, 1, n, d)
    right = F.scaled_dot_product_attention(q, q, v, attn_mask=valid[:, None, None, :])
    wrong = F.scaled_dot_product_attention(q, q, v, attn_mask=valid[:, None, :, None])
    both = ~(valid[0, :, None] & valid[0, None, :])  # (n, n)，True = 禁止：PAD 的行与列
    _, weights = _identity_mha(2, 1)(Q[None], Q[None], V2[None], attn_mask=both)
    return {
        "key_axis": _rows(right),
        "query_axis": _rows(wrong),
        "mha_both_nan_rows": weights[0].isnan().any(-1).nonzero().flatten().tolist(),
    }


def loss() -> dict:
    """同一条训练序列的交叉熵：不挡 PAD、按位置挡、按编号挡（PAD 与 EOS 同号）。"""
    valid = [m == 1 for m in pf.LOSS_MASK]
    logits = _t(pf.decoder_logits(pf.LOSS_IDS, valid, pf.position_ids(valid)))  # (n, VOCAB)
    labels = {
        "no_ignore": pf.LOSS_IDS,
        "by_position": pf.labels_from(pf.LOSS_IDS, pf.LOSS_MASK, pf.PAD),
        "by_id": pf.labels_from(pf.LOSS_IDS, pf.LOSS_MASK, pf.PAD, "id"),
    }
    out = {}
    for name, y in labels.items():
        target = torch.tensor(y[1:])  # 错开一位：第 t 行预测第 t + 1 个 token
        out[name] = F.cross_entropy(logits[:-1], target, ignore_index=pf.IGNORE_INDEX).item()
    return out


def _sdpa_dropout(q, k, v, p: float, training: bool, guarded: bool) -> torch.Tensor:
    """模块里常见的一行。``guarded=False`` 是错的写法：SDPA 没有 training 参数，p 总会生效。"""
    dropout_p = p if (training or not guarded) else 0.0
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout_p)


@torch.no_grad()
def dropout() -> dict:
    """dropout 的三处：SDPA 在 eval 里照丢、softmax 之后（被屏蔽的仍是 0）、softmax 之前（NaN）。"""
    p = pf.DROP_P
    torch.manual_seed(SEED)
    first = _sdpa_dropout(Q, Q, V, p, training=False, guarded=False)
    second = _sdpa_dropout(Q, Q, V, p, training=False, guarded=False)
    fixed = [_sdpa_dropout(Q, Q, V, p, training=False, guarded=True) for _ in range(2)]
    allowed = torch.tril(torch.ones(N, N, dtype=torch.bool))
    scores = (Q @ Q.T / Q.shape[-1] ** 0.5).masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    torch.manual_seed(SEED)
    keep_after = F.dropout(torch.ones(N, N, dtype=DTYPE), p).ne(0)  # 同一个种子：同一次取样
    torch.manual_seed(SEED)
    after = F.dropout(weights, p)  # 放在 softmax 之后
    torch.manual_seed(SEED + 1)
    keep_before = F.dropout(torch.ones(N, N, dtype=DTYPE), p).ne(0)
    torch.manual_seed(SEED + 1)
    before = torch.softmax(F.dropout(scores, p), dim=-1)  # 错：放在加了 −∞ 的分数上
    return {
        "eval_gap": (first - second).abs().max().item(),
        "guarded_gap": (fixed[0] - fixed[1]).abs().max().item(),
        "keep_after": keep_after.int().tolist(),
        "after": after.tolist(),
        "keep_before": keep_before.int().tolist(),
        "before_nan_rows": before.isnan().any(-1).nonzero().flatten().tolist(),
    }


@torch.no_grad()
def cross_attention() -> dict:
    """编码器–解码器的交叉注意力。单位投影的一层算数；``nn.TransformerDecoderLayer`` 做探针：
    改源里最后一个内容位置（目标第 0 行读不读得到），改源里的 PAD（读没读进来）。"""
    target = Q[: pf.CROSS_TARGET]  # (n_target, 2)
    valid = torch.tensor([pf.DEMO_VALID])  # 源的 PAD：位置 3
    across = torch.ones(pf.CROSS_TARGET, N, dtype=torch.bool).triu(1)  # 错：把因果表用到源上
    layer = _identity_mha(2, 1)
    right, _ = layer(target[None], Q[None], V2[None], key_padding_mask=~valid)
    wrong, _ = layer(target[None], Q[None], V2[None], key_padding_mask=~valid, attn_mask=across)
    torch.manual_seed(SEED)
    decoder = torch.nn.TransformerDecoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0, batch_first=True, dtype=DTYPE
    ).eval()
    tgt = torch.randn(1, pf.CROSS_TARGET, 4, dtype=DTYPE)
    memory = torch.randn(1, N, 4, dtype=DTYPE)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(pf.CROSS_TARGET, dtype=DTYPE)
    last_content = max(j for j, ok in enumerate(pf.DEMO_VALID) if ok)
    pad = pf.DEMO_VALID.index(False)

    def moved(where: int, **masks) -> bool:
        # 改动源的第 where 个位置，目标第 0 行的输出变不变
        changed = memory.clone()
        changed[0, where] += 10.0
        a = decoder(tgt, memory, tgt_mask=causal, **masks)[0, 0]
        b = decoder(tgt, changed, tgt_mask=causal, **masks)[0, 0]
        return bool((a - b).abs().max() > 1e-12)

    padding = {"memory_key_padding_mask": ~valid}
    return {
        "right": _rows(right),
        "causal_across": _rows(wrong),
        "probe_last_content": moved(last_content, **padding),
        "probe_last_content_causal_across": moved(last_content, memory_mask=across, **padding),
        "probe_pad": moved(pad, **padding),
        "probe_pad_no_padding_mask": moved(pad),
    }


def _quiet_transformers():
    import transformers

    transformers.utils.logging.set_verbosity_error()  # 右侧补 PAD 的提示照样会记在结果里
    return transformers


def _tiny_llama(eos_token_id=None):
    """本页的小 Llama：由配置造出，随机权重（种子 SEED），不下载；返回 (配置, float64 的模型)。
    ``eos_token_id=None``：不在 EOS 处停，每个序列都生成同样多的 token。"""
    tf = _quiet_transformers()
    torch.manual_seed(SEED)
    config = tf.LlamaConfig(
        vocab_size=8,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
        pad_token_id=pf.PAD,
        bos_token_id=None,
        eos_token_id=eos_token_id,
        initializer_range=INIT,
    )
    return config, tf.LlamaForCausalLM(config).to(DTYPE).eval()


@torch.no_grad()
def generation() -> dict:
    """一个由配置造出的小 Llama（随机权重，不下载）：同一批提示补在左边、补在右边、逐个单独生成。
    另把同一个模型换成 float32，看左侧补齐的第一步与单独生成差多少（只差舍入）。"""
    config, model = _tiny_llama()

    def run(tokens, valid, model=model) -> tuple[list, torch.Tensor]:
        out = model.generate(
            input_ids=torch.tensor(tokens),
            attention_mask=torch.tensor(valid).int(),
            max_new_tokens=pf.DEMO_STEPS,
            do_sample=False,
            output_scores=True,
            return_dict_in_generate=True,
        )
        new = out.sequences[:, len(tokens[0]) :].tolist()
        return new, out.scores[0]  # 新 token；第一步的 logits

    alone = [run([p], [[True] * len(p)]) for p in pf.DEMO_PROMPTS]
    batches = {side: run(*pf.pad_batch(pf.DEMO_PROMPTS, side)) for side in pf.SIDES}
    single = model.to(torch.float32)  # 同样的权重，float32
    alone32 = [run([p], [[True] * len(p)], single)[1][0] for p in pf.DEMO_PROMPTS]
    left32 = run(*pf.pad_batch(pf.DEMO_PROMPTS, "left"), single)[1]
    return {
        "config": {
            k: getattr(config, k) for k in ("vocab_size", "hidden_size", "num_hidden_layers")
        },
        "alone": [new[0] for new, _ in alone],
        **{side: new for side, (new, _) in batches.items()},
        "first_step_gap": {
            side: [(first[b] - alone[b][1][0]).abs().max().item() for b in range(len(alone))]
            for side, (_, first) in batches.items()
        },
        "float32_left_first_step_gap": [
            (left32[b] - alone32[b]).abs().max().item() for b in range(len(alone32))
        ],
    }


@torch.no_grad()
def positions() -> dict:
    """左侧补 PAD、直接调用模型（不经 generate）：不传 position_ids 时位置是 0、1、2…（arange），
    传入按 attention_mask 数的位置编号时才对。GPT-2 用学出来的位置嵌入，Llama 用 RoPE。"""
    tf = _quiet_transformers()
    prompt = pf.DEMO_PROMPTS[1]
    pad = len(pf.DEMO_PROMPTS[0]) - len(prompt)
    valid = [False] * pad + [True] * len(prompt)
    ids = torch.tensor([[pf.PAD] * pad + prompt])
    mask = torch.tensor([valid]).int()
    by_mask = torch.tensor([pf.position_ids(valid)])
    torch.manual_seed(SEED)
    models = {
        "gpt2": tf.GPT2LMHeadModel(
            tf.GPT2Config(
                vocab_size=8, n_positions=32, n_embd=16, n_layer=2, n_head=2, initializer_range=INIT
            )
        ),
        "llama": tf.LlamaForCausalLM(
            tf.LlamaConfig(
                vocab_size=8,
                hidden_size=16,
                intermediate_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                max_position_embeddings=32,
                initializer_range=INIT,
            )
        ),
    }
    out = {}
    for name, model in models.items():
        model = model.to(DTYPE).eval()
        alone = model(torch.tensor([prompt])).logits[0, -1]
        arange = model(ids, attention_mask=mask).logits[0, -1]  # 错：没传 position_ids
        fixed = model(ids, attention_mask=mask, position_ids=by_mask).logits[0, -1]
        out[name] = {
            "arange_gap": (arange - alone).abs().max().item(),
            "mask_gap": (fixed - alone).abs().max().item(),
        }
    return out


# -- 自己写的解码循环 ------------------------------------------------------------------------------
def key_padding_mask_from(attention_mask: torch.Tensor) -> torch.Tensor:
    """Hugging Face 的 ``attention_mask``（整数，1 = 内容，0 = PAD）换成 ``nn.MultiheadAttention``
    的 ``key_padding_mask``（布尔，True = 不读）：``attention_mask == 0``，不是 ``.bool()``。
    >>> key_padding_mask_from(torch.tensor([[0, 1, 1]])).tolist()
    [[True, False, False]]
    """
    ok = isinstance(attention_mask, torch.Tensor) and attention_mask.ndim == 2
    if not ok or attention_mask.is_floating_point() or attention_mask.numel() == 0:
        raise ValueError(
            f"attention_mask 必须是非空的二维整数张量 (batch, n)，收到 {attention_mask!r}"
        )
    if not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
        raise ValueError(f"attention_mask 只能含 0 与 1，收到 {attention_mask.tolist()}")
    return attention_mask == 0


def _decode_by_hand(model, ids, mask, steps: int, grow: bool) -> list:
    """预填一次，再每步只送一个新 token 与缓存：位置编号按 attention_mask 数，``grow`` 决定
    attention_mask 每步是否补上一列 1。返回每个序列的新 token。"""
    tf = _quiet_transformers()
    cache = tf.DynamicCache(config=model.config)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(ids, attention_mask=mask, position_ids=positions, past_key_values=cache).logits
    new = []
    for _ in range(steps):
        token = logits[:, -1].argmax(-1, keepdim=True)  # (batch, 1)
        new.append(token)
        if grow:
            mask = torch.cat([mask, torch.ones_like(token)], dim=-1)  # 新 token 多一列
        positions = positions[:, -1:] + 1
        step = model(token, attention_mask=mask, position_ids=positions, past_key_values=cache)
        logits = step.logits
    return torch.cat(new, dim=-1).tolist()


@torch.no_grad()
def decode_mask_grows() -> dict:
    """自己写的缓存解码：左侧补齐的一批，attention_mask 每步补一列（对），
    或一直用提示的那张（旧的）。"""
    _, model = _tiny_llama()
    tokens, valid = pf.pad_batch(pf.DEMO_PROMPTS, "left")
    ids = torch.tensor(tokens)
    mask = torch.tensor(valid).long()
    reference = model.generate(
        input_ids=ids, attention_mask=mask, max_new_tokens=pf.DEMO_STEPS, do_sample=False
    )
    return {
        "generate": reference[:, ids.shape[1] :].tolist(),
        "grows": _decode_by_hand(model, ids, mask, pf.DEMO_STEPS, grow=True),
        "stale": _decode_by_hand(model, ids, mask, pf.DEMO_STEPS, grow=False),
    }


@torch.no_grad()
def generate_without_mask() -> dict:
    """PAD 与 EOS 同号（都是 0）时，左侧补齐的一批不给 attention_mask 交给 generate：
    它推断不出 mask，PAD 被当成内容。记下 transformers 的提示，
    和短提示第一步的 logits 与单独生成之差。"""
    tf = _quiet_transformers()
    _, model = _tiny_llama(eos_token_id=pf.EOS)  # pad_token_id == eos_token_id == 0
    tokens, valid = pf.pad_batch(pf.DEMO_PROMPTS, "left")
    ids = torch.tensor(tokens)
    short = [not v[0] for v in valid].index(True)  # 补了 PAD 的那个提示
    kw = {"max_new_tokens": 1, "do_sample": False, "output_scores": True}
    kw["return_dict_in_generate"] = True
    alone = model.generate(input_ids=torch.tensor([pf.DEMO_PROMPTS[short]]), **kw).scores[0][0]
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = tf.utils.logging.get_logger("transformers.generation.utils")
    keep = Keep()
    tf.utils.logging.set_verbosity_warning()
    logger.addHandler(keep)
    try:
        without = model.generate(input_ids=ids, **kw).scores[0][short]
    finally:
        logger.removeHandler(keep)
        tf.utils.logging.set_verbosity_error()
    with_mask = model.generate(input_ids=ids, attention_mask=torch.tensor(valid).long(), **kw)
    return {
        "warning": [m for m in seen if "attention mask" in m],
        "short": short,
        "gap_without_mask": (without - alone).abs().max().item(),
        "gap_with_mask": (with_mask.scores[0][short] - alone).abs().max().item(),
    }


@torch.no_grad()
def one_query_mask() -> dict:
    """缓存里已有 n − 1 个位置，只送最后一个查询：交给 SDPA 整张 n × n 的因果表会报形状错；
    只给最后一行才对；单用 ``is_causal=True`` 则左上对齐，这个查询只读 Key 0。"""
    q = Q[-1:]  # (1, d)：新的一个查询
    table = torch.tril(torch.ones(N, N, dtype=torch.bool))
    try:
        F.scaled_dot_product_attention(q, Q, V, attn_mask=table)
        error = "ran"
    except RuntimeError as e:
        error = str(e)
    row = F.scaled_dot_product_attention(q, Q, V, attn_mask=table[-1:])  # (1, n) 的一行
    top_left = F.scaled_dot_product_attention(q, Q, V, is_causal=True)
    return {"table_error": error, "last_row": _rows(row), "is_causal": _rows(top_left)}


@torch.no_grad()
def hf_mask_to_mha() -> dict:
    """Hugging Face 的整数 attention_mask（位置 0 是 PAD）直接交给 MultiheadAttention 的
    key_padding_mask：整数报错，``.bool()`` 把读法反了过来（只读 PAD），``== 0`` 才对。
    编码器，没有因果规则。"""
    hf = torch.tensor([pf.DECODE_HF_MASK])  # (1, n)：1 = 内容，0 = PAD
    layer = _identity_mha(2, 1)
    try:
        layer(Q[None], Q[None], V2[None], key_padding_mask=hf)
        error = "ran"
    except AssertionError as e:
        error = str(e)
    inverted, _ = layer(Q[None], Q[None], V2[None], key_padding_mask=hf.bool())
    right, _ = layer(Q[None], Q[None], V2[None], key_padding_mask=key_padding_mask_from(hf))
    return {"integer_error": error, "bool": _rows(inverted), "equals_zero": _rows(right)}


@torch.no_grad()
def finite_fills() -> dict:
    """masked_fill 用有限的大负数（-1e9、``torch.finfo(dtype).min``）代替 −inf：
    一个 Key 也读不到的行（这里是位置 3，行与列都挡住的 PAD）成了平均分配，不是 NaN。
    float16 里 -1e9 放不下。另记 Transformers 的 eager 注意力怎样处理这样的一行
    （float64 与 float32 的模型）。"""
    scores = Q @ Q.T / Q.shape[-1] ** 0.5  # (n, n)
    keep = torch.tensor(pf.DEMO_VALID)
    blocked = ~(keep[:, None] & keep[None, :])  # PAD 的行与列
    fills = {"-inf": float("-inf"), "-1e9": -1e9, "finfo.min": torch.finfo(DTYPE).min}
    rows = {
        name: torch.softmax(scores.masked_fill(blocked, f), -1)[-1] for name, f in fills.items()
    }
    try:
        scores.half().masked_fill(blocked, -1e9)
        half_error = "ran"
    except RuntimeError as e:
        half_error = str(e)
    return {
        "pad_row": {
            name: [None if x != x else x for x in row.tolist()] for name, row in rows.items()
        },
        "float16_masked_fill_error": half_error,
        "float16_of_minus_1e9": str(torch.tensor(-1e9, dtype=torch.float16).item()),
        "transformers_eager": _eager_fully_masked_row(),
    }


@torch.no_grad()
def _eager_fully_masked_row() -> dict:
    """Transformers 的 eager 注意力：把 ``torch.finfo(dtype).min`` 加到分数上，
    softmax 却在 float32 里做。左侧补齐的一批里，短提示的位置 0 是 PAD，这一行一个 Key 也读不到：
    第一层第一个头在这一行的权重，每一层里哪些查询行是 NaN，和哪些位置的 logits 有 NaN。
    float64 的模型里 finfo(float64).min 到了 float32 是 −inf。"""
    _, model = _tiny_llama()
    model.set_attn_implementation("eager")  # 本页其余各节用默认的实现
    ids, valid = pf.pad_batch(pf.DEMO_PROMPTS, "left")
    short = next(b for b, row in enumerate(valid) if not row[0])
    seen = {}
    for dtype in (DTYPE, torch.float32):  # 先 float64：float32 之后再换回来，权重就不同了
        out = model.to(dtype)(
            torch.tensor(ids), attention_mask=torch.tensor(valid).int(), output_attentions=True
        )
        row = out.attentions[0][short, 0, 0]  # (n,)：第一层、第一个头、位置 0 的查询
        seen[str(dtype).removeprefix("torch.")] = {
            "pad_row": [None if x != x else x for x in row.tolist()],
            "logits_nan": bool(out.logits.isnan().any()),
            # 每一层里短提示（第一个头）是 NaN 的查询行；每个序列的每个位置，logits 里有没有 NaN
            "nan_query_rows": [
                layer[short, 0].isnan().any(-1).nonzero().flatten().tolist()
                for layer in out.attentions
            ],
            "logits_nan_positions": out.logits.isnan().any(-1).tolist(),
        }
    return seen


@torch.no_grad()
def sliding_window_positions() -> dict:
    """一个滑动窗口的小 Mistral（由配置造出，随机权重）：缓存只留窗口里的 K/V，
    位置编号却要一直数看过的 token。自己写的解码循环拿缓存的长度当位置（错），
    或拿看过的 token 数当位置（对），与 generate 比较。"""
    tf = _quiet_transformers()
    torch.manual_seed(SEED)
    config = tf.MistralConfig(
        vocab_size=8,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
        sliding_window=pf.WINDOW,
        pad_token_id=pf.PAD,
        bos_token_id=None,
        eos_token_id=None,
        initializer_range=INIT,
    )
    model = tf.MistralForCausalLM(config).to(DTYPE).eval()
    ids = torch.tensor([pf.DEMO_PROMPTS[0]])
    reference = model.generate(input_ids=ids, max_new_tokens=pf.DEMO_STEPS, do_sample=False)
    out = {"generate": reference[0, ids.shape[1] :].tolist()}
    for count in ("tokens_seen", "cache_length"):
        cache = tf.DynamicCache(config=config)
        logits = model(ids, past_key_values=cache).logits
        seen = ids.shape[1]
        new = []
        used = []  # 每步用的位置
        held = []  # 每步之前缓存里的位置数
        for _ in range(pf.DEMO_STEPS):
            token = logits[:, -1].argmax(-1, keepdim=True)
            new.append(token.item())
            kept = cache.layers[0].keys.shape[-2]  # 缓存里现在有几个位置的 K/V
            position = seen if count == "tokens_seen" else kept
            used.append(position)
            held.append(kept)
            logits = model(
                token, position_ids=torch.tensor([[position]]), past_key_values=cache
            ).logits
            seen += 1
        out[count] = {"tokens": new, "positions": used, "cache_held": held}
    return out


def run_demo() -> dict:
    """每一节看到的数，连同在哪里看到的（版本、设备、dtype）。"""
    return {
        "性质": "人工构造的小矩阵；由配置造出、没有训练过的小模型",
        "torch": torch.__version__,
        "transformers": _quiet_transformers().__version__,
        "device": "cpu",
        "dtype": "float64",
        "seed": SEED,
        "initializer_range": INIT,
        "polarity": polarity(),
        "float_mask": float_mask(),
        "lines": lines(),
        "causal_and_mask": causal_and_mask(),
        "head_order": head_order(),
        "padding_axis": padding_axis(),
        "loss": loss(),
        "dropout": dropout(),
        "cross_attention": cross_attention(),
        "generation": generation(),
        "positions": positions(),
        "decode_loop": {
            "mask_grows": decode_mask_grows(),
            "generate_without_mask": generate_without_mask(),
            "one_query_mask": one_query_mask(),
            "hf_mask_to_mha": hf_mask_to_mha(),
            "finite_fills": finite_fills(),
            "sliding_window": sliding_window_positions(),
        },
    }


if __name__ == "__main__":
    import doctest

    att.check(doctest.testmod().failed == 0, "上面的 >>> 示例应当全部通过")
    att.print_json(run_demo())
