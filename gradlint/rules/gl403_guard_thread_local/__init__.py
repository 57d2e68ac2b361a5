from gradlint.diagnostics import Severity
from gradlint.rule import Rule


class GuardThreadLocal(Rule):
    """
    ## What it does
    Finds a thread started while a grad-mode guard is alive, expecting the thread to
    inherit the guard.

    In C++: `std::thread` / `std::jthread` constructed (named or as a temporary),
    `std::async` (unless `std::launch::deferred`, which runs on the calling thread), or
    `emplace_back` on a `std::vector<std::thread>`, while an enabled `c10::InferenceMode`,
    a `NoGradGuard` or an `AutoGradMode(false)` is alive in the enclosing scope.
    `at::launch` is not reported: it propagates the guard.

    In Python: inside a block under `torch.inference_mode()`, `torch.no_grad()` or
    `torch.set_grad_enabled(False)` (a `with` or a decorator), `threading.Thread(...).start()`
    (also through a name bound to the thread) or work handed to a thread pool:
    `submit`/`map` on a `concurrent.futures.ThreadPoolExecutor`, `apply`/`apply_async`/
    `map`/`imap`/`starmap` on a `multiprocessing.pool.ThreadPool`. A bare
    `torch.set_grad_enabled(False)` statement counts as a guard from its statement to the
    end of its block (or to a `set_grad_enabled(True)` statement); at module level, as a
    service switches grad off at import, it reaches every function of the module. The
    functions of the module that guarded code calls run with grad off as well: a thread
    started or work submitted in such a helper (`f(...)` or `self.f(...)`, one definition of
    the name, and the helpers it calls in turn) is reported too, naming the call it is
    reached from.

    Not reported when the function the thread runs turns grad off itself: the `target=` of
    the thread (the `function` of a `Timer`), or the function handed to the pool, is a
    function or method of the same module that is decorated with a grad-off guard or whose
    body enters one in a `with` statement of its own (not nested in a loop or an `if`; the
    statements before it are taken for setup), also through `functools.partial(f, ...)` or
    `lambda: f(...)`, or a lookup in a registry of the module (`self.routes[path]`) whose
    every stored function does (a function stored by a decorator, `@app.get("/predict")`,
    gets what the decorators below it made, so a guard decorator above it does not count);
    with several definitions of that name, every one must. Functions
    imported from other modules are not read. Library methods known to turn grad off
    themselves count too, by method name, when the module defines no method of that name:
    `generate` (transformers' `GenerationMixin.generate` is decorated with
    `@torch.no_grad()`, and its streaming recipe runs `Thread(target=model.generate, ...)`).

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §3): grad mode and inference mode are
    thread-local. A `std::thread` started inside `c10::InferenceMode` sees
    `InferenceMode::is_enabled() == false` and makes normal tensors, so the work it does
    records autograd graphs; `at::launch` propagates the thread-local state and sees it
    enabled.

    In Python (torch-semantics §3): a `threading.Thread` or a `ThreadPoolExecutor` task
    started inside inference mode sees it off and grad mode on; inside `no_grad()`, or after
    `torch.set_grad_enabled(False)` as a statement, the task still runs with grad mode on. (`DataLoader` worker processes are a different case: fork
    copies the mode, §3; not reported.)

    ## Example
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, std::vector<torch::jit::IValue> inputs) {
      torch::Tensor outputs;
      c10::InferenceMode guard;
      std::thread worker([&] { outputs = module.forward(inputs).toTensor(); });
      worker.join();
      return outputs;
    }
    ```

    ```python
    from concurrent.futures import ThreadPoolExecutor

    import torch

    with torch.inference_mode(), ThreadPoolExecutor() as pool:
        futures = [pool.submit(model, batch) for batch in batches]
    ```

    ## Use instead
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, std::vector<torch::jit::IValue> inputs) {
      torch::Tensor outputs;
      std::thread worker([&] {
        c10::InferenceMode guard;
        outputs = module.forward(inputs).toTensor();
      });
      worker.join();
      return outputs;
    }
    ```

    ```python
    from concurrent.futures import ThreadPoolExecutor

    import torch


    def predict(batch):
        with torch.inference_mode():
            return model(batch)


    with ThreadPoolExecutor() as pool:
        futures = [pool.submit(predict, batch) for batch in batches]
    ```

    ## Fix safety
    No automatic fix: where the guard belongs in the thread's function is a judgement.

    In Python, no fix either.

    ## Known limitations
    - Python: only threads and the pools named above, recognised in the file; a pool passed
      in as a parameter, a thread started in a helper of another module or reached through
      an object other than `self` (`runner.start_all()`), and processes are not reported. A module-level switch is taken to be on in every function of the module
      (called after the import); a switch set in another module is not seen.
    - C++: only `std::thread`, `std::jthread`, `std::async` and vectors of threads; other
      thread pools (`pool.enqueue(...)`), `pthread_create` and a helper that starts the
      thread are not seen.

    ## References
    - torch-semantics §3 (thread-locality)
    - torch-semantics §3 (Python threads)
    """

    code = "GL403"
    name = "guard-thread-local"
    summary = "Thread started inside a grad-mode guard does not inherit it"
    severity = Severity.WARNING
    # The guard first: it is rarer than a thread, and the statement holding a finding names it.
    reads_outline_only = True  # Python: CPython's ast (the whole module) says all it needs
    prefilter = {"python": (r"\b(?:no_grad|inference_mode|set_grad_enabled)\b", r"\b(?:Thread|ThreadPoolExecutor|ThreadPool|Pool)\b"),
                 "cpp": (r"InferenceMode|NoGradGuard|AutoGradMode", r"std\s*::\s*(?:j?thread|async)")}
