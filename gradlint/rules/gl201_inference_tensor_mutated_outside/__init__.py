from gradlint.diagnostics import Safety
from gradlint.rule import Rule


class InferenceTensorMutatedOutside(Rule):
    """
    ## What it does
    Finds a tensor made while inference mode is on and updated in place after inference
    mode has ended.

    In Python: a value bound inside `with torch.inference_mode():` (or returned by a
    function of the same module decorated with `@torch.inference_mode()`, or returned from
    inside such a block), later changed in place outside it: `x.add_(...)` and the other
    in-place methods, `x[...] = ...`, `x += ...`, `out=x`, `torch.nn.init.*_(x)`. The
    value is followed through aliases and views (`x[i]`, `view`, `t`, `transpose`,
    `permute`, `squeeze`, `unsqueeze`, `expand`, `narrow`, `select`, and `.float()`,
    `.to(...)`, `.contiguous()`, which may return `x` itself), tuple unpacking, the fields
    of the named tuple an op returns (`s.topk(k).indices`, `.values`) or the module
    declares (`namedtuple("P", ...)`, `class P(NamedTuple)`: `p.x_start`), `self.`
    attributes (also when one method stores the value and another updates it),
    containers filled and then iterated, and into same-module functions that update a
    parameter in place. Rebinding, `.clone()` and out-of-place results end the tracking.
    A nested `torch.inference_mode(False)` counts as outside. Reading `x._version`
    (code that records a tensor's version to notice later edits) is reported in either
    mode, since an inference tensor has no version counter, with no fix (a clone made
    under the mode is an inference tensor too). A number that accumulates
    tensors under the mode (`total = 0`, then `total += F.cross_entropy(...)` in the block)
    is an inference tensor afterwards, so `total /= n` after the block is reported too.
    A call of a module (a name built from `torch.nn.<Class>(...)` or a module class of the
    file, `self.head`, a parameter every caller fills with one) is surely a tensor, and a
    helper of the file returns, under the caller's mode, what it makes itself. A `with` on
    the file's own guard (a `@contextmanager` that yields inside `with
    torch.inference_mode():`, a class whose `__enter__` enters one) counts as inference
    mode. Objects of the file's classes are followed through their attributes:
    `Cls(...)` under the mode runs `Cls.__init__` under it; an instance (`x = Cls(...)`,
    `Cls(...).load()` when `load` returns `self`, a parameter every caller fills with one,
    `y = x.part`) holds what the class's methods leave in `self.`; a method called under
    the mode (`stats.reset()` in the block) leaves inference tensors in `self.`, reported
    where a method that the code shows running outside the mode updates them. A function
    every call of which runs under the mode (and that nothing else names) is walked under
    it. A dict or list written out (`cache = {}`, `self.features = {}`, a module-level
    `_CACHE = {}` that a function fills) that takes a tensor under the mode
    (`cache[k] = t`) holds inference tensors, and so does what reads it later, in code the
    code shows running outside the mode. Arithmetic under the mode on a module's
    parameters (`w = base.weight + delta`) makes an inference tensor;
    `if x.is_inference(): ...` ends the tracking where the answer is no. Not followed:
    functions of other modules, dynamic dispatch and `getattr`, calls the code does not
    spell out (`model(x)` running `forward`), and which instance of a class a method ran on.

    In C++: a variable assigned inside a scope that holds an enabled `c10::InferenceMode`
    guard, then updated in place after the scope closes in the same function: any
    `v.xxx_(...)` call (`add_`, `copy_`, `index_put_`, `resize_`, ...), `v += ...` and the
    other compound assignments, `v[i] = ...`, `at::xxx_out(v, ...)`. Views (`v.view(...)`,
    `v[0]`, `v.select(...)`) carry the taint; `.clone()` and rebinding clear it;
    `v.detach()` is not followed (its writes do not raise, §7a). The same for a tensor made
    under the guard and updated under a nested `c10::InferenceMode(false)` (normal mode
    again, §7c; tensors made there are normal), and for a variable bound to the result of a
    function of the file that returns a tensor made under its own `InferenceMode`
    (`auto f = embed(x);`, then `f.div_(...)`).

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §1): every one of these updates raises
    `RuntimeError: Inplace update to inference tensor outside InferenceMode is not
    allowed.` Views of inference tensors are inference tensors, a no-op conversion
    returns the tensor itself, and `torch.no_grad()` or a nested
    `torch.inference_mode(False)` does not help. `t.resize_()` even resizes the tensor
    before it raises. Writes through `t.detach()` or `t.data` do not raise (they silently
    change `t`), so gradlint does not report them as this error. `t._version` raises
    `Inference tensors do not track version counter.` inside inference mode as well as
    outside (§1).

    In C++ the same (torch-semantics §7a): `c10::Error` with the same message, also for
    `index_put_`, `copy_` and `view(...).add_(...)`.

    ## Example
    ```python
    import torch

    with torch.inference_mode():
        scores = model(batch).softmax(-1)
    scores.clamp_(min=1e-6)
    ```

    ```cpp
    torch::Tensor calibrated_scores(torch::nn::Linear& head, const torch::Tensor& features) {
      torch::Tensor scores;
      {
        c10::InferenceMode guard;
        scores = head->forward(features).sigmoid();
      }
      scores.clamp_(0.05, 1.0);
      return scores;
    }
    ```

    ## Use instead
    ```python
    import torch

    with torch.inference_mode():
        scores = model(batch).softmax(-1)
    scores = scores.clone()
    scores.clamp_(min=1e-6)
    ```
    or do the update inside the block, or out of place (`scores = scores.clamp(min=1e-6)`).

    ```cpp
    torch::Tensor calibrated_scores(torch::nn::Linear& head, const torch::Tensor& features) {
      torch::Tensor scores;
      {
        c10::InferenceMode guard;
        scores = head->forward(features).sigmoid();
      }
      scores = scores.clone();
      scores.clamp_(0.05, 1.0);
      return scores;
    }
    ```

    ## Fix safety
    C++: no automatic fix (clone where the value leaves the scope, or move the update
    inside it).

    The fix clones the value where it leaves inference mode: `x = x.clone()` right after
    the block, or `.clone()` on a same-module call that returns a tensor. It is always
    unsafe: a clone is neither an inference tensor nor a leaf (torch-semantics §1:
    `t.clone().is_inference()` is False, and a clone's `.grad` is not the original's), and
    code that relies on sharing storage with the original sees a copy. No fix is offered
    for a call that returns a tuple, a list or a dict (a `.clone()` there raises
    `AttributeError`), nor for an element unpacked from one.

    ## Known limitations
    - A value that reaches a module only as an argument of a call from another module is not
      followed into it (the call is reported in the importer, as below).
    - Python, across modules: a function or a method of another checked module is followed
      by its summary (it returns an inference tensor whatever mode its caller runs in, or does
      to a parameter what torch rejects), found through `from X import name` (relative, or
      absolute by the module's path) and `Cls(...)`/`obj.method(...)` for a method name only
      one imported class exports. Not followed: modules outside the checked paths, names
      re-exported through another module (`from pkg import f` where `pkg/__init__.py`
      imports it), `import pkg.mod` used as `pkg.mod.f(...)`, `getattr` and dynamic dispatch,
      and what a module returns only because of what it imports itself (one hand-off). A
      helper of another module that does the update is reported at the call in the importer
      (the last line of the importer in the traceback), with the helper's line related; it
      is followed when the importer passes it a value by name (`standardize_(rewards)`, not
      `standardize_(rollout(policy))`), and a module that never enters the mode is read
      only for the functions and methods its importers pass such values to (and those they
      call in it). A guard another checked module defines (a class whose `__enter__` enters
      inference mode, a `@contextmanager` that yields inside it) is followed too: a `with`
      on it in the importer is an inference region.
    - Python: an operator under the mode on an ordinary tensor (`self.index >= n`, `-t`,
      `a | b`) makes an inference tensor when every binding of that tensor in the code is
      one (a torch call, a tensor method, an operator on another such tensor: a local in its
      function, `self.x` in the methods of its class); a name bound otherwise (a parameter, a
      loop target, unpacking) is not taken as a tensor.
    - Python: work handed to another thread (`pool.submit(fn, *args)` on a
      `ThreadPoolExecutor` the code shows it made, `threading.Thread(target=fn, args=(...))`)
      is followed as the call `fn(*args)` with the mode off (torch-semantics §3), whatever
      mode the code handing it over runs in; `map`, a pool passed in, `functools.partial`
      and lambdas as the work are not. A function of the module that calls the callable it
      is given under the mode and returns its result (`def execute_node(fn, *args): with
      torch.inference_mode(): return fn(*args)`) is followed as the call it makes
      (`execute_node(sample, guider, x)` as `sample(guider, x)`, a bound method `node.run`
      too) under the mode; one that passes on anything but its own parameters
      (`fn(x.to(device))`) is not.
    - Python: a value kept in a dict and read back by key (`d["a"]`), stored with
      `setattr` by a name the code does not spell (a literal, or each key of a dict display
      a loop runs over), read with `getattr`, or passed through a global set in another
      function is lost; so is one returned through a chain of two or more plain wrapper functions. A
      guard held in a variable (`ctx = torch.inference_mode()`, then `with ctx:`) or with a
      mode only known at run time (`inference_mode(mode)`, unless every call of the
      function passes a literal True for it, as a value or in a dict display) is not read
      as a region. A guard a helper of the module returns (`with self._eval_context(fitting):`,
      the helper choosing `torch.no_grad()` or `torch.inference_mode()`) is read as far as
      the code shows the helper's conditions: literal arguments and defaults of the calls
      that reach the `with`, and `self.flag` set in `__init__` from the construction of the
      object the calls run on; when some of those choose inference mode and others not, the
      calls in the region are taken to run both ways. A call on an object (`self.backend.run(q)`, `model(x)` into its class's
      `forward`, `collate(batch)` into its class's `__call__`, which runs in the mode of
      those calls) is followed when the assignments of this module show the object's class
      (through a function's return too: `model = build()`); one bound through `getattr` or
      another module is not. A function assigned to an instance's `forward`
      (`block.forward = wrapper`, a `functools.partial` of a method) runs when the instance
      is called, and what a forward pre-hook registered on it returns is its input, what a
      forward hook returns its output (torch-semantics §1f); a nested function reads the
      names of the code around it when that code calls it, and what it does inside its own
      `inference_mode(False)` is rejected whatever mode its caller runs in. Hooks on torch's
      own layers, or registered in a loop over `named_modules()`, are not followed. An
      attribute set from outside the class (`layer.cache = Cache(...)`) counts as one its
      methods set. An object holds what its constructor stored of its arguments
      (`Engine(model)` with `self.model = model`): a method that converts `self.model` under
      the mode converts the caller's `model`, when the object's name is bound once in that
      scope; other aliases of one object under two names are not followed. An instance
      built by `Cls(...)` of a class of the module (an nn.Module too) holds what its own
      `__init__` (or a base's of the module) keeps of the tracked values the call passes
      (`self.loc = loc`, `self.register_buffer("loc", loc)`, a nested `self.norm =
      Norm(stats["loc"])`, a base's of the module through `super().__init__(loc)`; a
      `@dataclass`'s fields): read as `inst.loc` where the instance is named, copied into by
      `inst.load_state_dict(sd)` when it is a registered buffer or an `nn.Parameter` (a plain
      attribute is no part of the state dict), and updated by a method called on it
      (`inst.recenter(x)` doing `self.loc.lerp_(...)`, and the methods it calls on `self`).
      An object a function of the module returns (`state = make_state(n)` with `return
      State(buffer=torch.empty(n))`) holds what it held there, made under the mode when the
      call runs under it. A method called on a parameter of a function
      (`guider.predict_noise(x)`) does to it what it does to the attributes its class's
      constructor stores of what it is given (`guider.model`): the caller's object holds
      them (callers in the same file; importers do not read it). Not followed: an instance
      used without a name (`Cls(t).loc`), the attributes of a parameter set other than by
      its constructor, `Base.__init__(self, t)` spelled out, and `setattr` with a computed
      name.
    - Python: a module's own tensor (a registered buffer, an `nn.Parameter`, `lin.weight`, a
      parameter of a module passed in) converted under the mode to a dtype the code reads
      from elsewhere (`buf.to(x.dtype)`, `t.to(saved_dtypes[k])`, `t.type_as(x)`) is taken
      to copy, since code converts where the dtypes may differ: where they never do, the
      conversion returns the tensor itself and a finding on it is false. A device move
      (`buf.to(x.device)`) and a literal float32 are taken to copy nothing.
    - C++: one function, read in text order. A value returned by a function that holds the
      guard, one that escapes through a container filled inside the scope, and an update
      earlier in a loop body (the next iteration) are not seen; a `.clone()` in one branch of
      an `if` clears the taint for all the code after it. `InferenceMode g(flag)` with a
      flag not written as `true` is not taken as enabled.

    ## References
    - torch-semantics §1 (inference tensors used outside), §1b
    """

    code = "GL201"
    name = "inference-tensor-mutated-outside"
    summary = "Tensor made under `inference_mode` updated in place after the block"
    fix_safety = Safety.UNSAFE
    # Inference mode is entered somewhere in the file (the alias import names it too).
    prefilter = {"python": r"\b(?:inference_mode|_InferenceMode)\b", "cpp": r"InferenceMode"}
    claims = "RuntimeError"  # not reported inside `pytest.raises(RuntimeError)` and the like
    follows_imports = True  # an imported function's inference tensors (`python.project`)
    reads_outline_only = True  # the flow runs on CPython's ast, which holds the whole module
