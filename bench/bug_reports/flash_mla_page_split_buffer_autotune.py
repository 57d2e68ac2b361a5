# source: https://github.com/sgl-project/sglang/pull/35116
# did: the MLA backend keeps a lazily allocated page-split buffer in a dict, allocated on first use; the first use was the autotune pass under inference mode, and CUDA-graph capture later wrote the buffer outside the mode
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
import torch

PAGE = 64
buffers = {}


def split_kv_pages_to_64(kv_cache, block_table, page_size=128):
    """Copies each 128-token page of the cache into two 64-token pages of a persistent buffer."""
    num_dst_pages = block_table.numel() * (page_size // PAGE)
    key = ("page_split", kv_cache.dtype, kv_cache.shape[-1])
    buf = buffers.get(key)
    if buf is None or buf.shape[0] < num_dst_pages:
        buf = torch.empty((num_dst_pages, PAGE, kv_cache.shape[-1]), dtype=kv_cache.dtype)
        buffers[key] = buf
    pages = kv_cache[block_table.flatten()].reshape(num_dst_pages, PAGE, -1)
    buf[:num_dst_pages].copy_(pages)  # expect: GL201
    return buf[:num_dst_pages]


def decode_attention(q, kv_cache, block_table):
    pages = split_kv_pages_to_64(kv_cache, block_table)
    keys = pages.reshape(-1, pages.shape[-1])
    return torch.softmax(q @ keys.T, dim=-1) @ keys


def autotune(q, kv_cache, block_table):
    with torch.inference_mode():
        return decode_attention(q, kv_cache, block_table)


def capture_cuda_graph(q, kv_cache, block_table):
    with torch.no_grad():  # capture runs outside inference mode
        return decode_attention(q, kv_cache, block_table)


if __name__ == "__main__":
    torch.manual_seed(0)
    kv_cache = torch.randn(4, 128, 16)
    block_table = torch.tensor([[0, 2]])
    q = torch.randn(1, 16)
    autotune(q, kv_cache, block_table)
    print("captured", tuple(capture_cuda_graph(q, kv_cache, block_table).shape))
