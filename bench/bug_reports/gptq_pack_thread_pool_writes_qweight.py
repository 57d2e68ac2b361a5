# source: https://github.com/ModelCloud/GPTQModel/pull/1930
# did: packing ran under inference_mode and allocated the packed weight there, then handed blocks to a ThreadPoolExecutor whose workers wrote into it; the worker threads were not in inference mode
# rule: GL403
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

BITS = 4
WORD_BITS = 32
PACK_FACTOR = WORD_BITS // BITS


def pack_weight(linear, scales, zeros, block_in=64, workers=2):
    weight = linear.weight.detach()
    out_features, in_features = weight.shape
    qweight = torch.empty((in_features // WORD_BITS * BITS, out_features), dtype=torch.int32)
    shifts = (torch.arange(PACK_FACTOR, dtype=torch.int64) * BITS).view(1, PACK_FACTOR, 1)

    def pack_rows(int_rows, dst, dst_row):
        grouped = int_rows.to(torch.int64).view(BITS, PACK_FACTOR, -1)
        packed = (grouped << shifts).sum(dim=1) & 0xFFFFFFFF
        dst[dst_row:dst_row + BITS] = packed.to(torch.int32)  # raises-here

    def process_block(i0, i1):
        int_block = torch.round(weight[:, i0:i1] / scales + zeros).clamp(0, 2**BITS - 1).to(torch.int32).T
        for g in range((i1 - i0) // WORD_BITS):
            pack_rows(int_block[g * WORD_BITS:(g + 1) * WORD_BITS], qweight, (i0 // WORD_BITS + g) * BITS)

    ranges = [(i0, min(i0 + block_in, in_features)) for i0 in range(0, in_features, block_in)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pack qweight") as ex:
        futures = [ex.submit(process_block, i0, i1) for i0, i1 in ranges]  # expect: GL403
        for future in futures:
            future.result()
    return qweight


@torch.inference_mode()
def pack_layer(linear):
    scales = linear.weight.abs().amax(dim=1, keepdim=True) / 7
    zeros = torch.full_like(scales, 8.0)
    return pack_weight(linear, scales, zeros)


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = nn.Linear(128, 16)
    print("packed", tuple(pack_layer(layer).shape))
