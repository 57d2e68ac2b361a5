# source: https://github.com/NVIDIA/Megatron-LM/pull/6091
# fixes: slot_free_list_rebuilt_in_graph_warmup.py
# fix: reset refills the existing free-slot tensor in place (`torch.arange(..., out=...)`, what the pull request does), so it stays a normal tensor when reset runs under the mode
from collections import OrderedDict

import torch


class MambaSlotAllocator:
    """Slots of a fixed pool of cached Mamba states; the free ones are a stack in a tensor."""

    def __init__(self, max_slots):
        self.max_slots = max_slots
        self.free_slots = torch.arange(max_slots, dtype=torch.int32)
        self.free_count = max_slots
        self.slot_of_block = {}

    def reset(self):
        torch.arange(self.max_slots, out=self.free_slots)
        self.free_count = self.max_slots
        self.slot_of_block.clear()

    def allocate(self, block_id):
        self.free_count -= 1
        slot = int(self.free_slots[self.free_count])
        self.slot_of_block[block_id] = slot
        return slot

    def invalidate(self, block_id):
        slot = self.slot_of_block.pop(block_id)
        self.free_slots[self.free_count] = slot
        self.free_count += 1


class DynamicContext:
    def __init__(self, max_cached_blocks=4, state_size=8):
        self.mamba_slots = MambaSlotAllocator(max_cached_blocks)
        self.states = torch.zeros(max_cached_blocks, state_size)
        self.cached = OrderedDict()  # block hash -> slot, oldest first

    def reset(self):
        self.mamba_slots.reset()
        self.cached.clear()

    def cache_block(self, block_hash, state):
        if len(self.cached) == self.mamba_slots.max_slots:
            oldest, _slot = self.cached.popitem(last=False)
            self.mamba_slots.invalidate(oldest)
        slot = self.mamba_slots.allocate(block_hash)
        self.states[slot] = state
        self.cached[block_hash] = slot


class Engine:
    def __init__(self, context, dim=8):
        self.context = context
        self.mixer = torch.nn.Linear(dim, dim)

    def forward(self, batch):
        return torch.tanh(self.mixer(batch))

    def create_cuda_graphs(self, batch_sizes=(1, 2, 4)):
        with torch.inference_mode():
            for size in batch_sizes:  # each capture starts from an empty context
                self.context.reset()
                self.forward(torch.zeros(size, self.mixer.in_features))

    def serve(self, prompts):
        with torch.no_grad():
            for block_hash, prompt in enumerate(prompts):
                state = self.forward(prompt[None])[0]
                self.context.cache_block(block_hash, state)


if __name__ == "__main__":
    torch.manual_seed(0)
    engine = Engine(DynamicContext())
    engine.create_cuda_graphs()
    engine.serve([torch.randn(8) for _ in range(6)])
    print("cached blocks", list(engine.context.cached))
