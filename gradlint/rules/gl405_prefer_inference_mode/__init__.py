from gradlint.diagnostics import Safety, Severity
from gradlint.rule import Rule


class PreferInferenceMode(Rule):
    """
    ## What it does
    Finds a no-grad guard in code that only runs inference and suggests InferenceMode.

    In C++: `torch::NoGradGuard NAME;`, `at::NoGradGuard NAME;`, `c10::AutoGradMode NAME(false);`
    (any qualification, also `auto NAME = torch::NoGradGuard();`) in a function (an
    Objective-C++ method counts) whose tensors never reach autograd: the function calls no
    `backward()`, `step()`, `train()` or `parameters()`, uses no optimizer and no
    `requires_grad`, returns nothing that can hold a tensor (plain scalars, strings,
    containers of them, structs of this file with only such fields, JNI primitives and
    arrays, and Objective-C `NS*` objects are fine), puts no tensor on the heap (`new
    at::Tensor`, `make_shared<at::Tensor>`), never asks `is_inference()` or
    `InferenceMode::is_enabled()` (their answers would change), writes no member, global, static or
    caller-owned object except plain output buffers, takes no non-const tensor reference or pointer and no callback that takes
    tensors, passes nothing made under the guard to a method of an object from outside the
    function (`queue_.push(output)`; a module's `forward` is fine), updates none of its
    caller's tensors in place, and never updates in place, outside the guard's scope (or
    earlier in the same loop), anything bound inside it. Typical sites: `main()` or a runner
    that loads a scripted module and calls `forward`, a benchmark loop, a mobile `predict`
    method (an Objective-C++ method or an Android JNI function).

    It stays silent inside lambdas and Objective-C blocks (their callers are unknown),
    inside a custom `torch::autograd::Function`, in kernels registered for an Autograd
    dispatch key, in training code, where grad mode is turned back on inside the guard's
    scope, and where an enabled `c10::InferenceMode` already covers the guard. Off by
    default: it is performance advice.

    In Python: a `with torch.no_grad():` block in a function that calls no `.backward()`,
    steps no optimizer and never mentions `requires_grad`, whose block updates nothing in
    place, assigns no attribute or item, fills no container and neither returns nor
    yields, and whose names are used after the block only to read numbers out (`.item()`,
    `.tolist()`, `.numpy()`, `.shape`, `print`, `float`, ...). Never in an
    `autograd.Function`, and never for a block that cannot make a tensor (only `raise`,
    `pass`, `return None`, docstrings, `assert` without calls): no guard is needed there.
    Nor for a block whose results are never read (a warm-up) in a function where another
    `no_grad` block does not qualify: switched alone, it would warm up another mode than the
    timed loop it is for (a `torch.compile`d model warmed up under `inference_mode`
    compiles again when called under `no_grad`: torch-semantics §9). Nor inside
    `pytest.raises(...)` or `assertRaises...`: that block is there to fail.

    ## Why is this bad?
    It is not wrong, only slower than it could be. `c10::InferenceMode` turns grad mode off
    like `NoGradGuard` and also leaves out the autograd view and in-place bookkeeping:
    tensors made under it keep no version counter (torch-semantics §1: `_version` raises
    "Inference tensors do not track version counter.", same in C++ §7a).

    What that buys was measured with `bench/inference_mode_speedup.py`: paired runs of each
    workload under both guards in one process, alternating, timed in thread CPU seconds so
    that other jobs on the machine do not count; ratio = time(no_grad) / time(inference_mode),
    the median of 31 repetitions, each the best of 5 runs per guard, with its quartiles and
    range. The C++ rows run libtorch directly, timed inside C++ under `torch::NoGradGuard`
    and `c10::InferenceMode`. On an AMD EPYC, 2 cores, 1 intra-op thread, torch 2.13.0+cpu,
    Python 3.11.7 (a machine shared with other jobs, load average about 10):

    | workload | no_grad | inference_mode | ratio | quartiles | min to max |
    |---|---|---|---|---|---|
    | view-heavy small tensors (views of views, in-place updates), Python | 12.30 ms | 10.16 ms | 1.21 | 1.20 to 1.22 | 1.19 to 1.24 |
    | conv net forward, 16x3x64x64, Python | 32.44 ms | 32.20 ms | 1.00 | 1.00 to 1.02 | 0.98 to 1.06 |
    | MLP forward, batch 8, Python | 7.13 ms | 6.92 ms | 1.03 | 1.02 to 1.04 | 0.95 to 1.10 |
    | view-heavy small tensors, C++ | 6.45 ms | 5.36 ms | 1.21 | 1.20 to 1.22 | 1.18 to 1.24 |
    | MLP forward, batch 8, C++ | 6.03 ms | 5.91 ms | 1.02 | 1.00 to 1.04 | 0.98 to 1.07 |

    A second run gave medians 1.22, 1.01, 1.02, 1.22 and 1.01. So: about 20% faster where
    the work is many small view and in-place ops, in Python and in C++ alike; a negligible
    gain (0 to 3%) on an ordinary conv or MLP forward pass, where the kernels dominate.
    Three earlier runs of the script's first version, timed in wall-clock seconds under a
    lighter load, gave 1.21 to 1.22 (view-heavy), 0.95 to 0.97 (conv) and 1.01 (MLP), with
    wider spreads. Either way, switching guards buys nothing measurable in such code.

    The switch has a cost elsewhere: a tensor made under InferenceMode cannot later be
    updated in place, get `requires_grad`, or be saved for backward outside it (§1, §7a
    E_INPLACE, E_RG, E_SAVE), which is why the rule only fires where no tensor leaves the
    function.

    The same trade-off holds in Python (§1): what the block makes can then never be
    updated in place, require grad or be saved for backward, which is why the rule only
    fires where nothing made in the block leaves it except as plain numbers.

    ## Example
    ```cpp
    int main(int argc, const char* argv[]) {
      torch::jit::script::Module module = torch::jit::load(argv[1]);
      torch::NoGradGuard no_grad;
      auto logits = module.forward({torch::rand({1, 3, 224, 224})}).toTensor();
      std::cout << logits.argmax(1).item<int64_t>() << "\\n";
    }
    ```

    ```python
    import torch


    def accuracy(model, loader):
        hits = 0
        for x, y in loader:
            with torch.no_grad():
                pred = model(x).argmax(-1)
            hits += (pred == y).sum().item()
        return hits
    ```

    ## Use instead
    ```cpp
    int main(int argc, const char* argv[]) {
      torch::jit::script::Module module = torch::jit::load(argv[1]);
      c10::InferenceMode no_grad;
      auto logits = module.forward({torch::rand({1, 3, 224, 224})}).toTensor();
      std::cout << logits.argmax(1).item<int64_t>() << "\\n";
    }
    ```

    ```python
    import torch


    def accuracy(model, loader):
        hits = 0
        for x, y in loader:
            with torch.inference_mode():
                pred = model(x).argmax(-1)
            hits += (pred == y).sum().item()
        return hits
    ```

    ## Fix safety
    Unsafe: the fix replaces the declaration with `c10::InferenceMode NAME;`, keeping the
    variable name. The analysis reads one function; a tensor that still reaches autograd
    through a path it cannot see (a callee that stores its argument, a pointer alias) would
    then raise E_INPLACE, E_RG or E_SAVE at run time (§1, §7a). Inside a custom autograd
    Function, InferenceMode breaks backward (§8), so the rule never fires there.

    In Python the fix (unsafe, for the same reason) renames `torch.no_grad` to
    `torch.inference_mode` where the guard is written as an attribute (`torch.no_grad()`,
    `T.no_grad()`); a bare imported `no_grad()` gets no fix.

    ## Known limitations
    - Python: only `with torch.no_grad():` blocks inside a function; a `@torch.no_grad()`
      decorator and blocks at module level are not suggested.
    - Only the function is read: a callee that keeps a tensor it is given (a cache, a
      global) is not seen, so the advice can be wrong there; that is why the fix is unsafe.

    ## Measured precision
    On the corpus of `bench/corpus/` (26 public repositories at pinned commits; `python
    bench/corpus/run.py --select GL405`, verdicts in `bench/corpus/triage.tsv`). Before the
    warm-up and `pytest.raises` exclusions above: 289 findings at 132 distinct sites (a
    notebook copied into every docs version is one site, `bench/corpus/sample.py`). Triaged:
    226 findings, namely the four groups of 20 or more identical copies whole, the 42 rows
    read earlier, and a random sample of 30 of the other 89 untriaged sites (seed 16, drawn
    by `sample.py`): 80 true, 133 false (130 of them three warm-up blocks copied across
    TensorRT's docs), 13 debatable, so 35% of triaged findings. After the exclusions:
    157 findings, 94 triaged: 80 true, 2 false (another warm-up, for a pipeline that runs
    under its own `no_grad`; a block that builds a model and runs none), 12 debatable (the
    block's forward stores state in the model or a cache read later; exports or graph
    captures whose path under inference mode is untested): 85% of triaged findings. On the
    random sample of sites alone: 21 true, 1 false, 7 debatable (72%). The 63 findings at
    the 59 unsampled sites are left untriaged. Four findings triaged true before are no
    longer reported (benchmark loops whose warm-up, or whose neighbouring block, keeps
    `no_grad`); four new true ones are (a name rebound after the block, `for _ in ...`, no
    longer counts as a use of it).

    ## References
    - torch-semantics §1 and §7a (what inference tensors forbid), §7c (InferenceMode cannot be
      re-enabled by `AutoGradMode(true)`), §8 (custom Functions), §9 (advice)
    - `bench/inference_mode_speedup.py` (the measured ratios above)
    """

    code = "GL405"
    name = "prefer-inference-mode"
    summary = "No-grad guard around pure inference: InferenceMode is cheaper"
    severity = Severity.INFO
    default_enabled = False
    fix_safety = Safety.UNSAFE
    # Python: the guard's name, and a `with` in a function that can be its block, so an
    # indented one (a statement in a function's body is indented; a line may also end
    # with a lone CR): one whose line names it, or one whose line stops after `(`, names
    # and dots, the item going on past a backslash or an open bracket; or an import that
    # renames it (`no_grad as ng`; `as` on a later line: then `no_grad` ends a line after
    # a backslash, after a `(` or in a list of imported names); or `async` continued by
    # a backslash (its `with` then starts no line). No
    # pattern spans a line, so only the lines holding `with`, `no_grad` or `async` are
    # searched (gradlint.textsearch); each alternative is read from the line's start, so
    # the search tries each line there only. Written for `re`'s fast paths (the same
    # matches as `[^\r\n]*?\bno_grad`): a run of `[^\r\n]*` followed by a letter skips to
    # that letter's occurrences, where `\b` before it would be tried at every character, so
    # the word boundary is asked after the word (`no_grad(?<!\wno_grad)`); the `no_grad`
    # ending a line is asked only of a line that holds it (the lookahead).
    prefilter = {"python": (r"\bno_grad\b",
                            r"(?m)(?:^|(?<=\r))(?:[ \t\f]*[ \t](?:async[ \t\f]+)?with\b"
                            r"(?:[^\r\n]*no_grad(?<!\wno_grad)\b"
                            r"|[ \t\f.\w]*(?:\([ \t\f(.\w]*(?:#[^\r\n]*|\\)?|\\)(?=\r|$))"
                            r"|(?=[^\r\n]*no_grad)(?:[^\r\n]*no_grad(?<!\wno_grad)[ \t\f]*(?:as\b|\\)"
                            r"|(?:[^(\r\n]*\([^\r\n]*no_grad(?<!\wno_grad)"
                            r"|[ \t\f]*(?:[\w.]+(?:[ \t\f]+as[ \t\f]+\w+)?[ \t\f]*,[ \t\f]*)*\bno_grad)"
                            r"[ \t\f]*(?:#[^\r\n]*)?(?=\r|$))"
                            r"|[^\r\n]*async(?<!\wasync)[ \t\f]*\\)"),
                 "cpp": r"NoGradGuard|AutoGradMode"}
    reads_outline_only = True  # Python: CPython's ast says all it needs; the fix is a text edit
