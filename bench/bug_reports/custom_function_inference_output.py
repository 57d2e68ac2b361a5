# source: https://github.com/pytorch/pytorch/issues/77967
# did: a custom autograd Function computed its output under inference_mode inside `forward` and returned it; the loss built on it had no graph
# rule: GL301
# error: RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
# held_out: no
import torch


class SinWithCustomBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        with torch.inference_mode():  # expect: GL301
            out = torch.sin(input)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * torch.cos(input)


if __name__ == "__main__":
    a = torch.zeros(10, requires_grad=True)
    out = SinWithCustomBackward.apply(a)
    print("requires grad", out.requires_grad)
    out.sum().backward()  # raises-here
    print("grad", a.grad[:3].tolist())
