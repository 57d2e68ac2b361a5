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

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §3): grad mode and inference mode are
    thread-local. A `std::thread` started inside `c10::InferenceMode` sees
    `InferenceMode::is_enabled() == false` and makes normal tensors, so the work it does
    records autograd graphs; `at::launch` propagates the thread-local state and sees it
    enabled.

    ## Example
    ```cpp
    c10::InferenceMode guard;
    std::thread worker([&] { outputs = module.forward(inputs).toTensor(); });
    worker.join();
    ```

    ## Use instead
    ```cpp
    std::thread worker([&] {
      c10::InferenceMode guard;
      outputs = module.forward(inputs).toTensor();
    });
    worker.join();
    ```

    ## Fix safety
    No automatic fix: where the guard belongs in the thread's function is a judgement.

    ## References
    - torch-semantics §3 (thread-locality)
    """

    code = "GL403"
    name = "guard-thread-local"
    summary = "Thread started inside a grad-mode guard does not inherit it"
    severity = Severity.WARNING
    prefilter = {"cpp": r"std\s*::\s*(?:j?thread|async)"}

    def check_cpp(self, file):
        from gradlint.rules.gl403_guard_thread_local.cpp import check

        return check(file)
