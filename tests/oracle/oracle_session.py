"""One oracle run over every fixture: gradlint fixes each one, the originals and the fixed
programs run as forked children of fork servers (two at a time, one per core) while the C++
extension builds, and each fixture gets a `Verdict`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import oracle_cpp
from fixture_harness import ROOT, Fixture, ProjectFixture, project_fixes
from oracle_report import SELF_TEST
from oracle_core import Claim, RunReport, Verdict, judge, parse_claim, read_exception_report

from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings, resolve_selection

PYTHON_SOURCES = (".py",)
CPP_SOURCES = (".cpp", ".cc", ".cxx", ".c++", ".h", ".hpp", ".hh")
DEFAULT_TIMEOUT = 120.0
# The guard-deleted program of `oracle: unguarded-fails` dies of unbounded recursion within
# a second (torch-semantics §8b); a hang is cut off sooner than a fixture's run.
UNGUARDED_TIMEOUT = 60.0
_LEGACY_GUARD_DECLARATION = re.compile(
    r"(?:\b(?:at|torch|c10)::)?\bAutoNonVariableTypeMode\s+\w+\s*(?:\([^()]*\)|\{[^{}]*\})?\s*;")


def without_legacy_guards(text: str) -> Optional[str]:
    """The program with each legacy guard GL101 is expected to report deleted (what a fix
    that removes the guard would leave), or None when a reported line declares none."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if re.search(r"expect:\s*GL101", line):
            line, count = _LEGACY_GUARD_DECLARATION.subn("", line)
            if not count:
                return None
            lines[number] = line
    return "".join(lines)


def default_build_dir() -> str:
    return os.environ.get("GRADLINT_ORACLE_BUILD_DIR") or os.path.join(ROOT, "build", "oracle")


def gradlint_fix(fixture: Fixture) -> str:
    """What `gradlint fix` makes of the fixture, with its select and unsafe-fixes markers (of
    a project fixture's `main.py`: what fixing the folder as one run makes of it)."""
    if isinstance(fixture, ProjectFixture):
        return project_fixes(fixture).get(os.path.basename(fixture.path), fixture.text)
    enabled = resolve_selection(list(fixture.selection()), [], [])
    linter = Linter(Settings(enabled=enabled, unsafe_fixes=fixture.unsafe_fixes))
    return linter.fix_text(fixture.text, fixture.path, language_for(fixture.path)).text


@dataclass
class Case:
    fixture: Fixture
    claim: Claim
    fixed_text: Optional[str]            # None: gradlint fix changes nothing
    skip_reason: Optional[str] = None
    problems: List[str] = field(default_factory=list)  # found before anything runs

    @property
    def kind(self) -> Optional[str]:
        extension = os.path.splitext(self.fixture.path)[1].lower()
        if extension in PYTHON_SOURCES:
            return "python"
        if extension in CPP_SOURCES:
            return "cpp"
        return None


def prepare(fixture: Fixture) -> Case:
    claim = parse_claim(fixture.text)
    try:
        fixed = gradlint_fix(fixture)
    except Exception as error:  # a gradlint bug fails this fixture, not the whole tier
        case = Case(fixture, claim, None)
        case.problems.append(f"gradlint fix failed: {type(error).__name__}: {error}")
        return case
    case = Case(fixture, claim, fixed if fixed != fixture.text else None)
    golden = fixture.golden is not None or (
        isinstance(fixture, ProjectFixture) and os.path.basename(fixture.path) in fixture.goldens())
    if case.fixed_text is None and golden:
        # Else the fixed program would silently go unrun.
        claim.errors.append("gradlint fix changes nothing, but a golden fixed file exists")
    if claim.skip_reason is not None and not claim.errors:
        case.skip_reason = f"oracle: skip {claim.skip_reason}"
        return case
    if case.kind is None:
        case.problems.append(f"{os.path.splitext(fixture.path)[1]} files cannot run; "
                             "state `oracle: skip <reason>`")
    if not claim.stated and not claim.errors and fixture.expected():
        case.problems.append("a fixture with findings needs an `oracle:` directive (raises, "
                             "before-prints/after-prints, or skip with a reason)")
    if claim.raises_type and not fixture.expected():
        # Still run: the verdict says what it raised.
        claim.errors.append("a negative (no expected findings) must run clean, but it claims "
                            "`oracle: raises`: catch and print the error if it is the point")
    if case.kind == "cpp" and claim.unguarded_fails and without_legacy_guards(fixture.text) is None:
        case.problems.append("`oracle: unguarded-fails`: a line expecting GL101 declares no "
                             "legacy guard to delete")
    if case.kind == "cpp":
        for label, text in (("original", fixture.text), ("fixed", case.fixed_text)):
            if text is None:
                continue
            problem = oracle_cpp.program_problem(text)
            if problem is None and not oracle_cpp.has_oracle_run(text):
                problem = "defines no `void oracle_run()` to run"
            if problem:
                case.problems.append(f"{label}: {problem}")
    return case


@dataclass
class Outcome:
    case: Case
    verdict: Optional[Verdict]           # None: skipped
    before: Optional[RunReport] = None
    after: Optional[RunReport] = None
    unguarded: Optional[RunReport] = None  # the original with its legacy guards deleted


def self_test_cases(folder: str) -> List[Case]:
    """`<name>.<ext>` with a hand-written wrong fix `<name>.wrong-fix.<ext>` beside it."""
    cases = []
    for name in sorted(os.listdir(folder)):
        stem, extension = os.path.splitext(name)
        if stem.endswith(".wrong-fix"):
            continue
        fixture = Fixture(os.path.join(folder, name), SELF_TEST)
        wrong_fix = os.path.join(folder, f"{stem}.wrong-fix{extension}")
        fixed = open(wrong_fix, encoding="utf-8").read() if os.path.exists(wrong_fix) else None
        cases.append(Case(fixture, parse_claim(fixture.text), fixed))
    return cases


def _sanitized(fixture_id: str) -> str:
    return re.sub(r"[^\w.-]", "_", fixture_id)


class OracleSession:
    def __init__(self, fixtures: List[Fixture], work_dir: str, build_dir: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT, workers: Optional[int] = None,
                 extra_cases: Sequence[Case] = ()) -> None:
        self.work_dir = work_dir
        self.build_dir = build_dir or default_build_dir()
        self.timeout = timeout
        self.cases = {fixture.id: prepare(fixture) for fixture in fixtures}
        # Cases with a given "fix" (the oracle's self-tests) share the one build.
        self.cases.update((case.fixture.id, case) for case in extra_cases)
        self.pool = ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2)
        self.futures: Dict[str, Future] = {}
        self.build_result: Optional[oracle_cpp.BuildResult] = None
        # fixture id -> variant (original, fixed, unguarded) -> its entry in the extension
        self.entries: Dict[str, Dict[str, str]] = {}
        # entry -> why it was not compiled (a header this machine lacks, a PYBIND11_MODULE)
        self.not_compiled: Dict[str, str] = {}
        # fixture id -> a future of {variant: clang's errors ([]: compiles)}, Objective-C++ only
        self.objc_checks: Dict[str, Future] = {}
        self.started = time.monotonic()
        self.finished: Optional[float] = None
        self._cpp_ready = threading.Event()
        self._lock = threading.Lock()
        self._servers = threading.local()  # one fork server per worker thread
        self._all_servers: List[ForkServer] = []

    # -- scheduling -------------------------------------------------------------------------

    def start(self) -> None:
        cpp_cases = [case for case in self.cases.values() if self._runnable(case, "cpp")]
        # Skipped C++ fixtures are still compiled, original and fixed, in the same build.
        compiled_only = [case for case in self.cases.values() if case.kind == "cpp"
                         and case.skip_reason is not None and case.fixture.code != SELF_TEST]
        threading.Thread(target=self._build_and_run_cpp, args=(cpp_cases, compiled_only),
                         daemon=True).start()
        if oracle_cpp.objc_compiler() is not None:
            for case in self.cases.values():
                if case.fixture.path.endswith(oracle_cpp.OBJC_SOURCES) and case.fixture.code != SELF_TEST:
                    self.objc_checks[case.fixture.id] = self.pool.submit(self._check_objc, case)
        for fixture_id, case in self.cases.items():
            if self._runnable(case, "python"):
                self.futures[fixture_id] = self.pool.submit(self._run_python, case)
            elif not self._runnable(case, "cpp"):
                done: Future = Future()
                done.set_result(self._judge_unrun(case))
                self.futures[fixture_id] = done

    @staticmethod
    def _runnable(case: Case, kind: str) -> bool:
        return case.kind == kind and case.skip_reason is None and not case.problems

    def outcome(self, fixture_id: str) -> Outcome:
        if fixture_id not in self.futures:
            self._cpp_ready.wait()
        return self.futures[fixture_id].result()

    def compile_problems(self, fixture_id: str) -> Dict[str, Optional[List[str]]]:
        """variant -> None (compiled), [] (not compiled here: see `not_compiled`), or the
        compiler's errors; waits for the build."""
        self._cpp_ready.wait()
        if self.build_result is None:
            raise RuntimeError("the C++ build did not run")
        problems: Dict[str, Optional[List[str]]] = {}
        for variant, entry in self.entries.get(fixture_id, {}).items():
            if entry in self.not_compiled:
                problems[variant] = []
            elif entry in self.build_result.failed:
                problems[variant] = self.build_result.failed[entry]
            elif self.build_result.library is None:
                problems[variant] = ["the oracle extension did not build:\n" + self.build_result.log[-4000:]]
            else:
                problems[variant] = None
        return problems

    def objc_problems(self, fixture_id: str) -> Dict[str, List[str]]:
        """variant (original, fixed) -> clang's errors ([]: it compiles) for an Objective-C++
        fixture; waits for the check."""
        return self.objc_checks[fixture_id].result()

    def _check_objc(self, case: Case) -> Dict[str, List[str]]:
        variants = {"original": (case.fixture.path, case.fixture.text)}
        if case.fixed_text is not None:
            path = oracle_cpp.write_source(os.path.join(self.build_dir, "fixed", _sanitized(case.fixture.id)),
                                           case.fixed_text)
            variants["fixed"] = (path, case.fixed_text)
        return {variant: oracle_cpp.objc_problems(path, text) for variant, (path, text) in variants.items()}

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for server in self._all_servers:
            server.close()

    # -- running ----------------------------------------------------------------------------

    def _run(self, case: Case, label: str, mode: str, arguments: List[str], cwd: str,
             timeout: Optional[float] = None) -> RunReport:
        """Run one program (`label`: before or after the fix) on this thread's fork server."""
        server = getattr(self._servers, "server", None)
        if server is None or server.process.poll() is not None:
            server = self._servers.server = ForkServer()
            with self._lock:
                self._all_servers.append(server)
        report = os.path.join(self._case_dir(case), f"{label}.json")
        return server.run([mode, report, *arguments], cwd, report, timeout or self.timeout)

    def _case_dir(self, case: Case) -> str:
        path = os.path.join(self.work_dir, _sanitized(case.fixture.id))
        os.makedirs(path, exist_ok=True)
        return path

    def _run_python(self, case: Case) -> Outcome:
        folder = self._case_dir(case)
        before = self._run(case, "before", "script", [case.fixture.path], folder)
        after = None
        if case.fixed_text is not None:
            fixed_dir = os.path.join(folder, "fixed")
            os.makedirs(fixed_dir, exist_ok=True)
            fixed_path = os.path.join(fixed_dir, os.path.basename(case.fixture.path))
            with open(fixed_path, "w", encoding="utf-8") as handle:
                handle.write(case.fixed_text)
            if isinstance(case.fixture, ProjectFixture):  # the fixed program runs beside its modules
                for module in case.fixture.files():
                    if module != case.fixture.path:
                        shutil.copy(module, fixed_dir)
            after = self._run(case, "after", "script", [fixed_path], fixed_dir)
        return self._finish(Outcome(case, judge(case.claim, before, after), before, after))

    def _build_and_run_cpp(self, cases: List[Case], compiled_only: Sequence[Case] = ()) -> None:
        try:
            programs = []
            for case in list(cases) + list(compiled_only):
                runnable = case in cases
                variants = {"original": (case.fixture.path, case.fixture.text)}
                generated = {"fixed": case.fixed_text}
                if runnable and case.claim.unguarded_fails:
                    generated["unguarded"] = without_legacy_guards(case.fixture.text)
                for variant, text in generated.items():
                    if text is not None:
                        path = oracle_cpp.write_source(os.path.join(
                            self.build_dir, variant, _sanitized(case.fixture.id)), text)
                        variants[variant] = (path, text)
                entries = self.entries[case.fixture.id] = {}
                for variant, (path, text) in variants.items():
                    entry = entries[variant] = oracle_cpp.entry_name(case.fixture.id, variant)
                    missing = [] if runnable else oracle_cpp.missing_headers(text)
                    problem = oracle_cpp.program_problem(text)
                    if missing or problem:
                        self.not_compiled[entry] = problem or f"needs {', '.join(missing)}, not installed here"
                        continue
                    programs.append(oracle_cpp.Program(entry, path, text, runnable=runnable))
            if programs:
                self.build_result = oracle_cpp.build(programs, self.build_dir)
            for case in cases:
                self.futures[case.fixture.id] = self.pool.submit(
                    self._run_cpp, case, self.entries[case.fixture.id])
        except BaseException as error:  # every C++ test must hear about it, not hang
            for case in cases:
                failed: Future = Future()
                failed.set_exception(error)
                self.futures.setdefault(case.fixture.id, failed)
        finally:
            self._cpp_ready.set()

    def _run_cpp(self, case: Case, entries: Dict[str, str]) -> Outcome:
        build = self.build_result
        not_built = [f"{variant}: does not compile:\n  " + "\n  ".join(build.failed[entry][:8])
                     for variant, entry in entries.items() if entry in build.failed]
        if build.library is None or not_built:
            verdict = Verdict(problems=not_built or [
                "the oracle extension did not build:\n" + build.log[-4000:]])
            return self._finish(Outcome(case, verdict))
        folder = self._case_dir(case)
        runs = {variant: self._run(case, variant, "extension", [build.library, entry], folder,
                                   UNGUARDED_TIMEOUT if variant == "unguarded" else self.timeout)
                for variant, entry in entries.items()}
        verdict = judge(case.claim, runs["original"], runs.get("fixed"), runs.get("unguarded"))
        return self._finish(Outcome(case, verdict, runs["original"], runs.get("fixed"), runs.get("unguarded")))

    def _judge_unrun(self, case: Case) -> Outcome:
        if case.skip_reason is not None:
            return self._finish(Outcome(case, None))
        return self._finish(Outcome(case, Verdict(problems=case.claim.errors + case.problems)))

    def _finish(self, outcome: Outcome) -> Outcome:
        with self._lock:
            self.finished = time.monotonic()
        return outcome


class ForkServer:
    """A process that imported torch once and forks one child per program run
    (`oracle_bootstrap.py serve`); a child that outlives its time limit is killed."""

    def __init__(self) -> None:
        environment = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        self.process = subprocess.Popen(
            [sys.executable, oracle_cpp.BOOTSTRAP, "serve"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)

    def run(self, arguments: List[str], cwd: str, report: str, timeout: float) -> RunReport:
        """Run `oracle_bootstrap.py MODE ARGUMENTS...` (script or extension) in a child."""
        for stale in (report, report + ".out", report + ".err"):
            if os.path.exists(stale):
                os.remove(stale)
        request = {"mode": arguments[0], "arguments": arguments[1:], "cwd": cwd, "timeout": timeout,
                   "stdout": report + ".out", "stderr": report + ".err"}
        started = time.monotonic()
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline()
        if not reply:
            raise RuntimeError("the oracle's fork server died")
        returncode = json.loads(reply)["returncode"]
        exception, thread_exceptions, line = read_exception_report(report)
        return RunReport(_read(report + ".out"), _read(report + ".err"), returncode,
                         time.monotonic() - started, exception, thread_exceptions, line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
