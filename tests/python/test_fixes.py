"""Fixes end to end on edge cases the fixtures do not cover: line endings, tabs, the end
of the file, nested blocks, multi-line strings."""
import pytest

from gradlint.engine import Linter
from gradlint.python.frontend import PYTHON
from gradlint.settings import Settings, resolve_selection


def _fix(source: str, code: str, unsafe: bool = False) -> str:
    linter = Linter(Settings(enabled=resolve_selection([code], [], []), unsafe_fixes=unsafe))
    return linter.fix_text(source, "t.py", PYTHON).text


def test_clone_after_block_keeps_crlf_and_tabs():
    source = ("import torch\r\ndef f(x):\r\n\twith torch.inference_mode():\r\n\t\tt = x * 2\r\n"
              "\tt.add_(1)\r\n")
    assert _fix(source, "GL201") == source  # a clone is not an inference tensor: unsafe (torch-semantics §1)
    assert _fix(source, "GL201", unsafe=True) == (
        "import torch\r\ndef f(x):\r\n\twith torch.inference_mode():\r\n\t\tt = x * 2\r\n"
        "\tt = t.clone()\r\n\tt.add_(1)\r\n")


def test_clone_after_block_at_end_of_file_without_newline():
    source = "import torch\nwith torch.inference_mode():\n    t = torch.ones(3)"
    # nothing mutates t: no finding, no change
    assert _fix(source, "GL201") == source
    source += "\nt.add_(1)"
    assert _fix(source, "GL201", unsafe=True) == (
        "import torch\nwith torch.inference_mode():\n    t = torch.ones(3)\nt = t.clone()\nt.add_(1)")


def test_clone_is_unsafe_also_for_conditional_bindings_and_aliases():
    source = (
        "import torch\n"
        "def f(x, cond):\n"
        "    with torch.inference_mode():\n"
        "        if cond:\n"
        "            t = x * 2\n"
        "    t.add_(1)\n"
    )
    assert _fix(source, "GL201") == source
    assert "    t = t.clone()\n    t.add_(1)" in _fix(source, "GL201", unsafe=True)
    aliased = (
        "import torch\n"
        "def f(x):\n"
        "    with torch.inference_mode():\n"
        "        t = x * 2\n"
        "        v = t.view(-1)\n"
        "    v.add_(1)\n"
    )
    assert _fix(aliased, "GL201") == aliased
    assert "    t = t.clone()\n    v = v.clone()\n    v.add_(1)" in _fix(aliased, "GL201", unsafe=True)


UNWRAP = '''\
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.inference_mode():  # why
            # square it
            if x.dim() > 1:
                y = x * x
            else:
                y = x.pow(2)
        ctx.save_for_backward(x)
        return y
'''


def test_unwrap_dedents_nested_blocks_and_keeps_comments():
    assert _fix(UNWRAP, "GL301") == UNWRAP  # the outputs stop being inference tensors: unsafe
    fixed = _fix(UNWRAP, "GL301", unsafe=True)
    assert fixed == UNWRAP.replace('''        with torch.inference_mode():  # why
            # square it
            if x.dim() > 1:
                y = x * x
            else:
                y = x.pow(2)
''', '''        # why
        # square it
        if x.dim() > 1:
            y = x * x
        else:
            y = x.pow(2)
''')
    assert _fix(fixed, "GL301", unsafe=True) == fixed


def test_unwrap_refuses_to_reindent_a_multiline_string():
    source = UNWRAP.replace("# square it", 'note = """a\n    b"""')
    assert _fix(source, "GL301", unsafe=True) == source


@pytest.mark.parametrize("written, fixed", [
    ("torch.inference_mode(0)", "torch.inference_mode(False)"),
    ("torch.inference_mode(1)", "torch.inference_mode(True)"),
    ("torch.set_grad_enabled(0)", "torch.set_grad_enabled(False)"),
    ("torch.inference_mode(None)", "torch.inference_mode(None)"),  # display-only
    ("torch.no_grad(False)", "torch.no_grad(False)"),  # display-only
])
def test_non_bool_mode_fixes(written, fixed):
    source = f"import torch\nwith {written}:\n    pass\n"
    assert _fix(source, "GL402") == f"import torch\nwith {fixed}:\n    pass\n"
