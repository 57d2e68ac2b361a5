# source: https://github.com/MIC-DKFZ/nnUNet/issues/2193
# did: ensembled several folds on CPU: the sliding-window helper runs under inference_mode, `.to('cpu')` returns the same tensor, and `prediction +=` for the second fold updates it outside
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (right-line)
import torch
from torch import nn


class FoldPredictor:
    def __init__(self, network, list_of_parameters, patch_size=16):
        self.network = network
        self.list_of_parameters = list_of_parameters
        self.patch_size = patch_size

    def predict_sliding_window_return_logits(self, data):
        with torch.inference_mode():
            logits = torch.zeros((2, *data.shape[1:]))
            counts = torch.zeros(data.shape[1:])
            for start in range(0, data.shape[1] - self.patch_size + 1, self.patch_size // 2):
                window = slice(start, start + self.patch_size)
                patch = data[None, :, window]
                logits[:, window] += self.network(patch)[0]
                counts[window] += 1
            logits /= counts
        return logits

    def predict_logits_from_preprocessed_data(self, data):
        prediction = None
        for params in self.list_of_parameters:
            self.network.load_state_dict(params)
            if prediction is None:
                prediction = self.predict_sliding_window_return_logits(data).to("cpu")
            else:
                prediction += self.predict_sliding_window_return_logits(data).to("cpu")  # expect: GL201
        if len(self.list_of_parameters) > 1:
            prediction /= len(self.list_of_parameters)
        return prediction


if __name__ == "__main__":
    torch.manual_seed(0)
    network = nn.Conv1d(1, 2, kernel_size=3, padding=1)
    folds = []
    for fold in range(2):
        nn.init.normal_(network.weight)
        folds.append({k: v.clone() for k, v in network.state_dict().items()})
    predictor = FoldPredictor(network, folds)
    case = torch.randn(1, 64)
    logits = predictor.predict_logits_from_preprocessed_data(case)
    print("segmentation", logits.argmax(0)[:8].tolist())
