# source: https://github.com/pytorch/pytorch/issues/77967
# fixes: custom_function_inference_output.py
# fix: no guard in `forward` (it already runs with grad mode off); the report notes that returning `out.clone()` also gives a normal tensor
import torch


class SinWithCustomBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.sin(input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * torch.cos(input)


if __name__ == "__main__":
    a = torch.zeros(10, requires_grad=True)
    out = SinWithCustomBackward.apply(a)
    print("requires grad", out.requires_grad)
    out.sum().backward()
    print("grad", a.grad[:3].tolist())
