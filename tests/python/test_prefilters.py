"""Each Python rule's prefilter and screens are necessary conditions: run every rule on every
Python fixture without them; wherever it finds something, every prefilter pattern must match,
its text screen (if it has one) must pass, and so must its screen (read from CPython's `ast`)
and its part screen on the outline of the part of the module its prefilter selects."""
import functools
import os
import re
import sys

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fixture_harness import all_fixtures  # noqa: E402
from gradlint.python import frontend  # noqa: E402
from gradlint.python.frontend import PYTHON  # noqa: E402
from gradlint.python.outline import parse_outline  # noqa: E402
from gradlint.python.partial import matches_in_code  # noqa: E402
from gradlint.rule import all_rules  # noqa: E402

PYTHON_RULES = {code: rule for code, rule in all_rules().items() if "python" in rule.languages()}
PYTHON_FIXTURES = [f for f in all_fixtures() if f.path.endswith(".py")]


@functools.lru_cache(maxsize=None)
def _parsed(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return text, PYTHON.parse(path, text)


# Functions and a class that name no guard: what the part screens never read.
_UNRELATED_CODE = "".join(f"""

def helper_{index}(values, scale={index}):
    total = 0
    for value in values:
        total += value * scale
    return total
""" for index in range(30)) + """

class Registry:
    def __init__(self):
        self.items = {}

    def add(self, key, value):
        self.items[key] = value
"""


@pytest.mark.parametrize("code", sorted(PYTHON_RULES))
def test_prefilter_and_screen_pass_every_file_the_rule_reports(code, monkeypatch):
    monkeypatch.setattr(frontend, "PART_SCREEN_MIN_CHARS", 0)  # every fixture is small
    rule = PYTHON_RULES[code]()
    patterns = rule.prefilters_for("python")
    assert patterns, f"{code} has no Python prefilter: every file would be parsed for it"
    screen = rule.screen("python")
    assert screen is not None, f"{code} has no Python screen: every file its prefilter selects is parsed"
    reported = parts = 0
    for fixture in PYTHON_FIXTURES:
        text, parsed = _parsed(fixture.path)
        if list(rule.check("python", parsed)):
            reported += 1
            for pattern in patterns:
                assert pattern.search(text), f"{code} reports in {fixture.id} but its prefilter does not match"
                assert matches_in_code(text, pattern), \
                    f"{code} reports in {fixture.id} but its prefilter matches only comments or strings"
            text_screen = rule.text_screen("python")
            assert text_screen is None or text_screen(text), \
                f"{code} reports in {fixture.id} but its text screen says it cannot"
            outline = parse_outline(text)
            assert outline is not None and screen(outline), \
                f"{code} reports in {fixture.id} but its screen says it cannot"
            part_screen = rule.part_screen("python")
            # the fixture among code that names no guard, as a large module holds it
            padded = text + _UNRELATED_CODE
            part = PYTHON.partial_outline(padded, [rule.prefilter_for("python")]) if part_screen else None
            assert part is None or part_screen(part), \
                f"{code} reports in {fixture.id} but its part screen says it cannot"
            parts += part is not None
    assert reported, f"{code} reports nothing in any fixture"
    assert parts or rule.part_screen("python") is None, f"{code}'s part screen read no fixture's part"


@pytest.mark.parametrize("code, text", [
    ("GL402", "from torch import no_grad as ng\nwith ng:\n    pass\n"),
    ("GL402", "import torch\nwith torch.inference_mode(0):\n    pass\n"),
    ("GL201", "from torch import inference_mode as im\n"),
    ("GL407", "from torch import set_grad_enabled as sge\n"),
    ("GL406", "from torch.autograd import _unsafe_preserve_version_counter as keep\n"),
    ("GL406", "with torch.autograd._unsafe_preserve_version_counter  # the guard\n        (t):\n    t.add_(1)\n"),
    ("GL406", "with (torch.autograd._unsafe_preserve_version_counter)(t):\n    t.add_(1)\n"),
    ("GL406", "torch._C._AutoDispatchBelowADInplaceOrView \\\n    ()\n"),
])
def test_an_alias_import_brings_the_real_name_into_the_text(code, text):
    assert PYTHON_RULES[code].prefilter_for("python").search(text)


@pytest.mark.parametrize("code, text", [
    ("GL402", "with torch.no_grad():\n    pass\nwith torch.inference_mode(False):\n    pass\n"),
    ("GL402", "with torch.inference_mode(mode=flag), torch.set_grad_enabled(True):\n    pass\n"),
    ("GL406", "with torch.no_grad():\n    x.add_(1)\n"),
    ("GL406", "if value is torch.autograd._unsafe_preserve_version_counter:\n    pass\n"),  # not called
    ("GL406", "GUARDS = [torch._C._AutoDispatchBelowADInplaceOrView]\n"),
])
def test_prefilter_skips_files_without_a_chance(code, text):
    assert not PYTHON_RULES[code].prefilter_for("python").search(text)


# GL405 reports a `with` of `no_grad` in a function: each way of writing one that its
# prefilter must still let through, and files it may skip.
GL405_BLOCK = "        y = model(x)\n    return y.item()\n"


@pytest.mark.parametrize("text", [
    "def f(model, x):\n    with torch.no_grad():\n" + GL405_BLOCK,
    ("def f(model, x):\n    with torch.no_grad():\n" + GL405_BLOCK).replace("\n", "\r"),
    ("def f(model, x):\n    with torch.no_grad():\n" + GL405_BLOCK).replace("\n", "\r\n"),
    "def f(model, x):\n\twith (\n\t\ttorch.no_grad()\n\t):\n" + GL405_BLOCK.replace("    ", "\t"),
    "def f(model, x):\n    with (  # the formatter's wrap\n        torch.no_grad()):\n" + GL405_BLOCK,
    "def f(model, x):\n    with ( \\\n        torch.no_grad()):\n" + GL405_BLOCK,
    "def f(model, x):\n    with \\\n        torch.no_grad():\n" + GL405_BLOCK,
    "def f(model, x):\n    with (torch.autograd.\n            no_grad()):\n" + GL405_BLOCK,
    "async def f(model, x):\n    async \\\n        with torch.no_grad():\n" + GL405_BLOCK,
    "from torch import (no_grad\n    as frozen)\ndef f(model, x):\n    with frozen():\n" + GL405_BLOCK,
    "from torch import (no_grad  # the class\n    # renamed\n    as frozen)\ndef f(model, x):\n    with frozen():\n"
    + GL405_BLOCK,
    "from torch import no_grad \\\n    as frozen\ndef f(model, x):\n    with frozen():\n" + GL405_BLOCK,
])
def test_gl405_prefilter_passes_every_way_to_write_the_block(text):
    text = "import torch\n" + text
    rule = PYTHON_RULES["GL405"]()
    assert list(rule.check("python", PYTHON.parse("scoring.py", text))), "GL405 reports here"
    assert all(pattern.search(text) for pattern in rule.prefilters_for("python"))


@pytest.mark.parametrize("text", [
    "with torch.no_grad():\n    y = model(x)\n",  # at the top level: not in a function
    '@torch.no_grad()\ndef generate(model, x):\n    """Call it\n    with the following arguments: `cb(step: int,\n'
    '    with the model and a batch\n    """\n    return model(x)\n',  # a decorator, and prose
    "def f(path):\n    with open(path) as handle:\n        return handle.read()\nGUARD = torch.no_grad\n",
])
def test_gl405_prefilter_skips_files_without_a_block(text):
    assert not all(pattern.search(text) for pattern in PYTHON_RULES["GL405"].prefilters_for("python"))


# GL405's second pattern as first written (lazy runs, `\b` before each word); the rule's is
# written for `re`'s fast paths and must match the same lines.
GL405_LINE_AS_READ = re.compile(
    r"(?m)(?:^|(?<=\r))(?:[ \t\f]*[ \t](?:async[ \t\f]+)?with\b"
    r"(?:[^\r\n]*\bno_grad\b|[ \t\f.\w]*(?:\([ \t\f(.\w]*(?:#[^\r\n]*|\\)?|\\)(?=\r|$))"
    r"|[^\r\n]*?\bno_grad[ \t\f]*(?:as\b|\\)"
    r"|(?:[^(\r\n]*\([^\r\n]*|[ \t\f]*(?:[\w.]+(?:[ \t\f]+as[ \t\f]+\w+)?[ \t\f]*,[ \t\f]*)*)"
    r"\bno_grad[ \t\f]*(?:#[^\r\n]*)?(?=\r|$)|[^\r\n]*?\basync[ \t\f]*\\)")
LINE_PIECES = [" ", "\t", "\f", "    with ", "with", "async ", "async", "no_grad", "xno_grad", "éno_grad", "no_gradx",
               " as ", "as", "(", ")", ",", ".", "\\", "# c", ":", "torch.", "a", "_", "\r", "\n", "\r\n", "'"]


@hypothesis_settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(LINE_PIECES), max_size=14))
def test_gl405_line_pattern_matches_where_its_first_form_does(pieces):
    text = "".join(pieces)
    fast = PYTHON_RULES["GL405"].prefilters_for("python")[1]
    for start in range(len(text) + 1):
        assert bool(fast.match(text, start)) == bool(GL405_LINE_AS_READ.match(text, start)), (text, start)


def test_gl405_line_pattern_matches_the_fixtures_lines_where_its_first_form_does():
    fast = PYTHON_RULES["GL405"].prefilters_for("python")[1]
    for fixture in PYTHON_FIXTURES:
        text = _parsed(fixture.path)[0]
        for start in [0] + [at + 1 for at, character in enumerate(text) if character in "\r\n"]:
            assert bool(fast.match(text, start)) == bool(GL405_LINE_AS_READ.match(text, start)), fixture.id


# GL405's text screen (gl405_prefer_inference_mode/python.py: text_screen) reads each block
# from the text alone. Blocks that qualify, written so that a careless reading of the text
# would take them for blocks that do not: each must still be read.
GL405_QUALIFYING = [
    # words of the reasons in strings and comments only
    'def f(model, x):\n    with torch.no_grad():\n        y = model(x)  # return y += 1\n'
    '        label = "self.cache = y; return y; lambda: requires"\n    return y.item()\n',
    # `requires_grad` and `return y` in another function, after this one
    "def f(model, x):\n    with torch.no_grad():\n        y = model(x)\n    print(y)\n\n\n"
    "def g(w, y):\n    w.requires_grad_(True)\n    return y\n",
    # a continuation line and a string at column 0 inside the function
    "def f(model, x):\n    prompt = (\n'a prompt at column 0'\n)\n    note = \"\"\"\nno return here\n\"\"\"\n"
    "    with torch.no_grad():\n        y = model(x)\n    return float(y), note, prompt\n",
    # the names it binds read out only, and a name rebound after the block
    "def f(model, x):\n    with torch.no_grad():\n        y = model(x)\n        scores = y.softmax(-1)\n"
    "    y = 0\n    print(y, scores.tolist())\n    return len(scores.shape)\n",
    # parameters on lines of their own, the closing parenthesis at the def's column
    "def f(\n    model,\n    x,\n):\n    with torch.no_grad():\n        y = model(x)\n    return y.item()\n",
    # an expression statement that is `print(...)`, and an annotated name
    "def f(model, x):\n    with torch.no_grad():\n        y: torch.Tensor = model(x)\n        print(y.mean())\n"
    "    return y.sum().item()\n",
    # after the block: names read out, rebound by `for` and `as`, or assigned to
    "def f(model, x, loader):\n    with torch.no_grad():\n        y = model(x)\n    total = y.sum().item() + 1\n"
    "    for y in loader:\n        pass\n    with open('log') as y:\n        y, z = 1, 2\n    return total, z\n",
    # tabs
    "def f(model, x):\n\twith torch.no_grad():\n\t\ty = model(x)\n\treturn y.item()\n",
    # read out by calls written with a space, beside methods named like them
    "def f(model, x):\n    with torch.no_grad():\n        y = model(x)\n    print (y.float().mean())\n"
    "    return float (y.sum())\n",
    # a method in a class, a nested function after the block that reads a number out
    "class Scorer:\n    def score(self, x):\n        with torch.no_grad():\n            y = self.model(x)\n"
    "        def show():\n            print(y)\n        show()\n        return y.item()\n",
]


@pytest.mark.parametrize("text", GL405_QUALIFYING)
def test_gl405_text_screen_reads_every_block_that_qualifies(text):
    text = "import torch\n" + text
    rule = PYTHON_RULES["GL405"]()
    assert list(rule.check("python", PYTHON.parse("scoring.py", text))), "GL405 reports here"
    assert rule.text_screen("python")(text)


# Blocks the text alone shows cannot qualify (`_Function.qualifies`): the file is not read.
@pytest.mark.parametrize("block, after", [
    ("        y = model(x)\n        return y\n", ""),                       # returns from the block
    ("        y = model(x)\n        total += y.sum()\n", ""),               # augmented assignment
    ("        y = model(x)\n        cache.append(y)\n", ""),                # fills a container
    ("        self.last = model(x)\n", ""),                                  # assigns an attribute
    ("        model(x)\n", ""),                                              # an expression statement
    ("        y = model(x)\n", "    return y\n"),                           # the tensor leaves
    ("        y = model(x)\n", "    outputs.append(y)\n"),                  # handed to a call
    ("        y = model(x)\n", "    x.requires_grad_(True)\n"),             # the function trains
    ("        y = model(x)\n", "    assert y is not None\n"),               # compared, not read out
    ("        y = model(x)\n", "    z = y[0]; total = compare(x, y)\n"),    # indexed, handed on
    ("        y = model(x)\n", "    z = y.float().cpu()\n"),               # a method, not float(...)
    ("        (y,\n         z) = model(x)\n", "    return z\n"),            # names in brackets
    ("        y = model(x)\n", "    assert y.numel() == y.sum()\n"),        # compared, beside a number read out
    ("        y = model(x)\n", "    w = y.item() + y \\\n        .sum()\n"),  # added to one read out
])
def test_gl405_text_screen_skips_blocks_that_cannot_qualify(block, after):
    text = f"import torch\n\n\ndef f(model, x, cache, outputs, total):\n    with torch.no_grad():\n{block}{after}"
    rule = PYTHON_RULES["GL405"]()
    assert not list(rule.check("python", PYTHON.parse("scoring.py", text)))
    assert not rule.text_screen("python")(text)


@pytest.mark.parametrize("text", [
    "with torch.no_grad():\n    y = model(x)\nprint(y)\n",                      # at module level
    "class Scorer:\n    with torch.no_grad():\n        y = model(x)\n",          # in a class body
    "def f():\n    pass\n\n\nif x:\n    with torch.no_grad():\n        y = model(x)\n",  # after a function
    'def f():\n    """\ndef g():\n"""\nwith torch.no_grad():\n    y = model(x)\n',  # `def` in a string
])
def test_gl405_text_screen_skips_blocks_outside_functions(text):
    text = "import torch\n\n\n" + text
    rule = PYTHON_RULES["GL405"]()
    assert not list(rule.check("python", PYTHON.parse("scoring.py", text)))
    assert not rule.text_screen("python")(text)


# Pieces of modules as users write them: GL407's switch and reset under each spelling and
# alias an import gives, beside code and prose that name the same words.
SWITCH_PIECES = [
    "import torch\n",
    "import torch as T\n",
    "from torch import set_grad_enabled as sge\n",
    "from torch import (\n    set_grad_enabled  # the switch\n    as grad_switch,\n)\n",
    "from torch.autograd import grad_mode\n",
    "from torch import *\n",
    "torch.set_grad_enabled(False)\n",
    "T.set_grad_enabled(mode=False)\n",
    "sge(False)\n",
    "grad_switch(  # off\n    False)\n",
    "grad_mode.set_grad_enabled((False))\n",
    "set_grad_enabled(False)\n",
    "torch.set_grad_enabled(True)\n",
    "sge(True)\n",
    "grad_switch(previous)\n",
    "set_grad_enabled(previous)\n",
    "previous = torch.is_grad_enabled()\n",
    "logits = model(batch)\n",
    "pass\n",
    "# torch.set_grad_enabled(False) is a switch\n",
    "NOTE = 'set_grad_enabled'\n",
    "with torch.set_grad_enabled(False):\n    logits = model(batch)\n",
    "with torch.no_grad(), sge(True):\n    pass\n",
    "with torch.no_grad(): torch.set_grad_enabled(False)\n",
    "with previous: sge(True)\n",
    "with (\n    grad_switch(False)\n):\n    pass\n",
]


@hypothesis_settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(SWITCH_PIECES), max_size=8), st.booleans())
def test_gl407_text_screen_passes_wherever_the_rule_reports(pieces, in_function):
    body = "".join(pieces)
    text = "def run(model, batch, previous):\n" + "".join("    " + line + "\n" for line in body.splitlines()) \
        + "    pass\n" if in_function else body
    rule = PYTHON_RULES["GL407"]()
    if list(rule.check("python", PYTHON.parse("loop.py", text))):
        assert rule.text_screen("python")(text)


@pytest.mark.parametrize("imported, switch, reset", [
    (SWITCH_PIECES[0], "torch.set_grad_enabled(False)", "torch.set_grad_enabled(True)"),
    (SWITCH_PIECES[2], "sge(False)", "sge(previous)"),
    (SWITCH_PIECES[3], "grad_switch(  # off\n    False)", "grad_switch(True)"),
    (SWITCH_PIECES[4], "grad_mode.set_grad_enabled((False))", "grad_mode.set_grad_enabled(previous)"),
])
def test_gl407_text_screen_passes_each_spelling_of_a_reported_switch(imported, switch, reset):
    text = f"import torch\n{imported}previous = torch.is_grad_enabled()\n{switch}\nlogits = model(batch)\n{reset}\n"
    rule = PYTHON_RULES["GL407"]()
    assert list(rule.check("python", PYTHON.parse("loop.py", text))), "GL407 reports here"
    assert rule.text_screen("python")(text)


@pytest.mark.parametrize("text", [
    "import torch\n\ntorch.set_grad_enabled(False)\n",  # a global switch, never undone
    "import torch\n\nwith torch.set_grad_enabled(True):\n    pass\n",
    "import torch\n\ntorch.set_grad_enabled(True)\nlogits = model(batch)\ntorch.set_grad_enabled(True)\n",
    # the name in `with` items and in blocks on a header's line only (neither is a switch)
    "import torch\n\nwith torch.set_grad_enabled(False):\n    logits = model(batch)\n"
    "with torch.set_grad_enabled(True): pass\ntorch.set_grad_enabled(False)\n",
    "import torch\n\nwith x: torch.set_grad_enabled(False)\nlogits = model(batch)\n"
    "\fwith  x: torch.set_grad_enabled(True)\n",
])
def test_gl407_text_screen_skips_files_without_a_switch_and_a_reset(text):
    rule = PYTHON_RULES["GL407"]()
    assert not list(rule.check("python", PYTHON.parse("loop.py", text)))
    assert not rule.text_screen("python")(text)


# Pieces of `no_grad` blocks and of what follows them in the function, as users write them:
# what the block binds, then uses of it that read a number out, hand it on, or rebind it.
BLOCK_PIECES = ["y = model(x)", "y, z = model(x), model(x)", "scores = y.softmax(-1)", "print(y.mean())",
                "y: torch.Tensor = model(x)", "self.last = model(x)", "total += y.sum()", "label = 'return y'",
                "(y, z) = model(x), model(x)", "[\n    y,\n    z,\n] = model(x), model(x)", "(y) = model(x)"]
AFTER_PIECES = ["return y.item()", "return float(y)", "return float (y.sum())", "z = y.float().cpu()",
                "print (y.shape)", "total = y.sum().item() + 1", "outputs.append(y)", "return y", "y = 0",
                "for y in loader:\n        pass", "z = compute(y).item()", "assert y is not None",
                "return len(z.shape)", "w = y . item()", "w = (y\n        .numpy())", "x.requires_grad_(True)",
                "del y", "return int(scores.argmax())", "assert y.numel() == y.sum()", "w = y.item() + y.sum()",
                "w = (y).item() + 1", "w = y.sum() .item() * y . shape[0]", "w = y.sum(dim=z.item()) + z.item()",
                "print(y.item()); w = y", "if y.sum().item() > 0: pass", "w = [y.item()][0] + y[0].item()",
                "w = y.item() if y.dim() else y", "w = (y.sum(), y.item())", "w = y.item() or -y", "w: y = y.item()"]


# Where the function is: at the top, after a block at module level, as a method, after
# a function that ended, nested in one; or no function around the block at all.
AROUND_BLOCK = ["", "with torch.no_grad():\n    w = model(x)\n", "class Scorer:\n", "def g():\n    pass\n",
                "def outer():\n", "if x:\n"]


@hypothesis_settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(BLOCK_PIECES), min_size=1, max_size=3),
       st.lists(st.sampled_from(AFTER_PIECES), max_size=4), st.sampled_from(AROUND_BLOCK), st.booleans())
def test_gl405_text_screen_passes_wherever_the_rule_reports(block, after, around, in_function):
    header = "def f(model, x, loader, outputs, total, z, scores):\n" if in_function else "if model:\n"
    body = (header + "    with torch.no_grad():\n" + "".join(f"        {line}\n" for line in block)
            + "".join(f"    {line}\n" for line in after))
    if around.endswith(":\n") and not around.startswith("with"):
        body = "".join(f"    {line}\n" for line in body.splitlines())
    text = "import torch\n\n\n" + around + body
    rule = PYTHON_RULES["GL405"]()
    if list(rule.check("python", PYTHON.parse("scoring.py", text))):
        assert rule.text_screen("python")(text)


@pytest.mark.parametrize("path", sorted(fixture.path for fixture in PYTHON_FIXTURES))
def test_gl405_reads_uses_after_a_block_as_the_whole_function_shows_them(path):
    """What GL405 reads of a function from the end of a block on (the subtrees that end
    before it left out) tells each name's uses after the block as reading the whole does."""
    import ast

    from gradlint.rules.gl405_prefer_inference_mode.python import _Uses

    with open(path, encoding="utf-8") as handle:
        module = ast.parse(handle.read())
    for function in ast.walk(module):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}
        whole = _Uses(function)
        for block in ast.walk(function):
            if isinstance(block, (ast.With, ast.AsyncWith)):
                after = _Uses(function, (block.end_lineno, block.end_col_offset))
                for name in names:
                    assert after.escape_after(block, {name}) == whole.escape_after(block, {name}), (name, block.lineno)
