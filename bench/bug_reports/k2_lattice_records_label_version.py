# source: https://github.com/k2-fsa/k2/issues/1210
# did: wrapped the transducer's fast beam search in inference_mode for speed; the decoder's lattice class records the version of its labels tensor when it is built, and the labels were made in the mode
# rule: GL201
# error: RuntimeError: Inference tensors do not track version counter
# held_out: no
import torch
from torch import nn


class Lattice:
    """An arc list with per-arc labels; remembers the labels' version to notice later edits."""

    def __init__(self, arcs):
        self._tensor_attr = {"arcs": arcs, "labels": arcs[:, 2].clone()}
        self.labels_version = self._tensor_attr["labels"]._version  # expect: GL201

    def best_path(self):
        return self._tensor_attr["labels"].tolist()


class DecodingStreams:
    def __init__(self, num_frames):
        self.num_frames = num_frames
        self.arcs = []

    def advance(self, logits):
        best = logits.argmax(dim=-1)
        frame = torch.full_like(best, len(self.arcs))
        self.arcs.append(torch.stack([frame, frame + 1, best, torch.zeros_like(best)], dim=-1))

    def format_output(self):
        return Lattice(torch.cat(self.arcs))


def fast_beam_search(model, encoder_out):
    streams = DecodingStreams(encoder_out.shape[0])
    for t in range(encoder_out.shape[0]):
        streams.advance(model(encoder_out[t:t + 1]))
    return streams.format_output()


def decode(model, features):
    with torch.inference_mode():
        lattice = fast_beam_search(model, features)
    return lattice.best_path()


if __name__ == "__main__":
    torch.manual_seed(0)
    joiner = nn.Linear(8, 10)
    print("hyp", decode(joiner, torch.randn(5, 8)))
