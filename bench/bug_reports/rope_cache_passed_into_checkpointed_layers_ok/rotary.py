import torch

_COS_SIN_CACHE = {}


def rotary_embeddings(seq_len, dim, base=10000.0):
    cached = _COS_SIN_CACHE.get((seq_len, dim))
    if cached is None:
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        freqs = torch.outer(torch.arange(seq_len).float(), inv_freq)
        cached = (freqs.cos(), freqs.sin())
        _COS_SIN_CACHE[(seq_len, dim)] = cached
    return cached
