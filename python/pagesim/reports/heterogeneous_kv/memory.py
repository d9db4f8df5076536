"""Memory arithmetic over a model's layer groups, as `pagesim model NAME --json` prints them.

A model document has kv_bytes_per_token_per_gpu (what a uniform allocator charges per token:
every attending layer at the widest per-layer KV) and groups_per_gpu, each with its kind,
layers, kv_bytes_per_token (its layers together), window_tokens, encoder_tokens and
state_bytes. Pure functions; sizes in bytes.
"""


def tokens_kept(group, n):
    """Tokens of a request with n decoder tokens that a group keeps KV for, as its attention
    needs them (allocator/layer_group.h): every token (full), the last W (sliding window), the
    current chunk (chunked local: n - floor((n - 1) / C) * C), the encoder's (cross-attention),
    none (recurrent)."""
    kind = group["kind"]
    if kind == "full":
        return n
    if kind == "sliding_window":
        return min(n, group["window_tokens"])
    if kind == "chunked_local":
        c = group["window_tokens"]
        return n - (n - 1) // c * c if n > 0 else 0
    if kind == "cross_attention":
        return group["encoder_tokens"]
    if kind == "recurrent":
        return 0
    raise ValueError(f"unknown layer group kind {kind!r}")


def encoder_tokens(model):
    """Encoder tokens per request (the cross-attention groups'), 0 without one."""
    return max((g["encoder_tokens"] for g in model["groups_per_gpu"]), default=0)


def uniform_bytes(model, n):
    """KV bytes a uniform allocator holds for a request of n decoder tokens at one token per
    block (the RFC's BLOCK_SIZE=1): every token, the encoder's included (vLLM v0 kept them in
    the same pool at the same page size), in every attending layer."""
    return (n + encoder_tokens(model)) * model["kv_bytes_per_token_per_gpu"]


def needed_bytes(model, n):
    """KV bytes the request's attention needs: each group's kept tokens at its own width."""
    return sum(tokens_kept(g, n) * g["kv_bytes_per_token"] for g in model["groups_per_gpu"])


def uniform_waste_pct(model, n):
    """The share of a uniform allocator's KV memory the request never reads again (%)."""
    total = uniform_bytes(model, n)
    return 100.0 * (total - needed_bytes(model, n)) / total if total else 0.0


def decoder_tokens_for_waste(model, pct):
    """The smallest n >= 1 whose uniform waste is at most pct, or None when none up to
    max_seq_len is (waste falls as n grows for a model with cross-attention)."""
    lo, hi = 1, model["max_seq_len"]
    if uniform_waste_pct(model, hi) > pct:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if uniform_waste_pct(model, mid) <= pct:
            hi = mid
        else:
            lo = mid + 1
    return lo


def recurrent_state_bytes(model):
    """Per-sequence state of the recurrent groups (bytes, per GPU)."""
    return sum(g["state_bytes"] for g in model["groups_per_gpu"])


def vattention_tokens_per_page(model, page_bytes):
    """Tokens one page holds in one layer's K (or V) buffer on one worker, per attending group
    (vAttention's "block size"), as {kind: tokens}."""
    out = {}
    for g in model["groups_per_gpu"]:
        if g["kind"] == "recurrent":
            continue
        per_layer_k = g["kv_bytes_per_token"] // g["layers"] // 2
        out[g["kind"]] = page_bytes // per_layer_k
    return out


def vattention_worst_waste_bytes(model, page_bytes):
    """vAttention's worst case per request: one mapped, unused page in each attending layer's
    K and V buffer on every tensor-parallel worker: tp * 2 * attending layers * page."""
    layers = sum(g["layers"] for g in model["groups_per_gpu"] if g["kind"] != "recurrent")
    return model["tensor_parallel"] * 2 * layers * page_bytes
