# source: https://github.com/learning-at-home/hivemind/pull/521
# fixes: mpfuture_state_byte_made_under_inference.py
# fix: the state setter writes the shared byte inside `with torch.inference_mode():`, which accepts an inference or a normal buffer alike (the pull request's change)
import torch
from torch import nn

STATES = ("PENDING", "RUNNING", "FINISHED")


class SharedBytes:
    """Hands out single bytes of one shared-memory buffer, allocating a new buffer when it runs out."""

    _buffer = None
    _index = 0

    @classmethod
    def next(cls):
        if cls._buffer is None or cls._index >= len(cls._buffer):
            cls._buffer = torch.empty([16], dtype=torch.uint8).share_memory_()
            cls._index = 0
        cls._index += 1
        return cls._buffer[cls._index - 1]


class SharedFuture:
    def __init__(self):
        self._state_code = SharedBytes.next()
        self._state = "PENDING"
        self._result = None

    @property
    def _state(self):
        return STATES[self._state_code.item()]

    @_state.setter
    def _state(self, new_state):
        with torch.inference_mode():
            self._state_code[...] = STATES.index(new_state)

    def set_result(self, result):
        self._result = result
        self._state = "FINISHED"

    def done(self):
        return self._state == "FINISHED"


def serve_step(block, hidden):
    with torch.inference_mode():
        future = SharedFuture()
        output = block(hidden)
    return future, output


def deliver(future, output):
    future.set_result(output.tolist())


if __name__ == "__main__":
    torch.manual_seed(0)
    block = nn.Linear(4, 4)
    future, output = serve_step(block, torch.randn(1, 4))
    deliver(future, output)
    print("done", future.done())
