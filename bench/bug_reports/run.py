"""Real bug reports, rebuilt as programs: does torch raise where the header says, and does gradlint find it?

Each program `<id>.py` (or a package folder `<id>/` whose entry is `main.py`) starts with a header:

    # source: <address of the public report>
    # did: <what the user did, one line>
    # rule: GLnnn
    # error: <ExceptionType>: <the start of torch's message>
    # held_out: yes|no|promoted <date> (<outcome while held out>)
    # lang: cpp                     (only for C++ programs; default python)

and marks the line torch rejects with `# expect: GLnnn` (`// expect:` in C++): the line gradlint
should report. When torch raises on another line than the one to report (a model built under the
mode and trained later is reported at its construction), that line carries `# raises-here`.
Beside it, `<id>_ok.py` (or `<id>_ok/`) is the corrected program (`# fixes:` and `# fix:` in its
header): it must run clean and draw no finding.

    python bench/bug_reports/run.py              # gradlint's recall, dev and held-out, and false findings
    python bench/bug_reports/run.py --confirm    # torch raises the stated error on the stated line; `_ok` runs clean
    python bench/bug_reports/run.py --confirm --cpp   # also build the C++ programs (one extension, ~45 s)
    python bench/bug_reports/run.py --json       # the measurement as JSON
    python bench/bug_reports/run.py --list       # the programs, their rule, split and source

`held_out` was drawn once per program from a hash of its id (`drawn_held_out`), before gradlint
was run on it, so the flow rules can be measured on programs they were not tuned on. A batch of
reports found after the flow was last tuned may instead be held out whole, and says so:
`# held_out_by: fresh <date> (...)` (those are held out whatever the draw says). A held-out
program may be promoted once its outcome is recorded (`promoted 2026-12-01 (missed)`): from then on
it is worked on like a dev program and counted in its own `promoted` row; new programs keep the draw.
The measurement exits 0 whatever it finds; `--confirm` exits 1 when a program does not behave as
its header says. C++ programs are built only with `--cpp` (all in one extension, ~45 s here; the
message is checked, not the line, since a c10::Error carries no user frame); otherwise they are listed
as skipped.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_TIMEOUT_S = 180
HELD_OUT_SALT = "gradlint-issue-15:"
SOURCE_SUFFIXES = {"python": (".py",), "cpp": (".cpp", ".cc", ".cxx", ".h", ".hpp", ".cu")}

_HEADER = re.compile(r"^\s*(?:#|//)\s*(source|did|rule|error|held_out|held_out_by|lang|fixes|fix):\s*(.*?)\s*$")
_EXPECT = re.compile(r"(?:#|//)\s*expect:\s*(GL\d{3}(?:\s*,\s*GL\d{3})*)")
_RAISES_HERE = re.compile(r"(?:#|//)\s*raises-here\b")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')


def drawn_held_out(program_id: str) -> bool:
    """The seeded draw that decided the split: about one program in three is held out."""
    digest = hashlib.sha256((HELD_OUT_SALT + program_id).encode()).hexdigest()
    return int(digest, 16) % 3 == 0


@dataclass
class Program:
    id: str
    path: str  # the file, or the package folder
    header: Dict[str, str]
    expects: List[Tuple[str, int, str]] = field(default_factory=list)  # (file, line, code)
    raises_at: Optional[Tuple[str, int]] = None  # (file, line) where torch raises
    ok: bool = False

    @property
    def is_package(self) -> bool:
        return os.path.isdir(self.path)

    @property
    def lang(self) -> str:
        return self.header.get("lang", "python")

    @property
    def rule(self) -> str:
        return self.header.get("rule", "")

    @property
    def held_out(self) -> bool:
        return self.header.get("held_out", "").lower() == "yes"

    @property
    def held_out_fresh(self) -> bool:
        """Held out with its whole batch of fresh reports rather than by the draw."""
        return self.header.get("held_out_by", "").lower().startswith("fresh")

    @property
    def promoted(self) -> bool:
        """Drawn held out, measured so, then opened for work (the header keeps the outcome it had)."""
        return self.header.get("held_out", "").lower().startswith("promoted")

    @property
    def split(self) -> str:
        return "held-out" if self.held_out else "promoted" if self.promoted else "dev"

    @property
    def entry(self) -> str:
        return os.path.join(self.path, "main.py") if self.is_package else self.path

    def files(self) -> List[str]:
        if not self.is_package:
            return [self.path]
        found = []
        for root, _dirs, names in os.walk(self.path):
            found += [os.path.join(root, n) for n in sorted(names) if n.endswith(SOURCE_SUFFIXES[self.lang])]
        return sorted(found)

    def expected_line(self) -> Optional[Tuple[str, int]]:
        """Where torch should raise: the `raises-here` line, else the single expect line."""
        if self.raises_at:
            return self.raises_at
        if len(self.expects) == 1:
            return self.expects[0][0], self.expects[0][1]
        return None


def parse_header(text: str) -> Dict[str, str]:
    header: Dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _HEADER.match(line)
        if not match:
            if line.lstrip().startswith(("#", "//")):
                continue
            break
        header.setdefault(match.group(1), match.group(2))
    return header


def load_program(path: str) -> Program:
    name = os.path.basename(path.rstrip(os.sep))
    program_id = os.path.splitext(name)[0] if os.path.isfile(path) else name
    program = Program(id=program_id, path=path, header={}, ok=program_id.endswith("_ok"))
    entry = program.entry
    if not os.path.exists(entry) and program.is_package:
        entry = next(iter(program.files()), entry)
    with open(entry, encoding="utf-8") as handle:
        program.header = parse_header(handle.read())
    for file in program.files():
        with open(file, encoding="utf-8") as handle:
            for number, line in enumerate(handle.read().splitlines(), start=1):
                for match in _EXPECT.finditer(line):
                    for code in re.split(r"\s*,\s*", match.group(1)):
                        program.expects.append((file, number, code))
                if _RAISES_HERE.search(line):
                    program.raises_at = (file, number)
    return program


def discover(root: str = HERE) -> List[Program]:
    programs = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.startswith((".", "_")) or name == os.path.basename(__file__):
            continue
        if os.path.isdir(path) or name.endswith(SOURCE_SUFFIXES["python"] + SOURCE_SUFFIXES["cpp"]):
            programs.append(load_program(path))
    return programs


def pairs(programs: Sequence[Program]) -> List[Tuple[Program, Optional[Program]]]:
    by_id = {p.id: p for p in programs}
    return [(p, by_id.get(p.id + "_ok")) for p in programs if not p.ok]


# ---------------------------------------------------------------- the measurement


def run_gradlint(program: Program) -> List[dict]:
    command = ["gradlint", "check", "--output-format", "json", "--no-cache", "--select", "ALL", "--exit-zero", program.path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gradlint failed on {program.path} ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout or "[]")


def same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def classify(program: Program, findings: Sequence[dict]) -> str:
    """`right-line`, `elsewhere` (the expected code, another line) or `missed`."""
    wanted = [(file, line) for file, line, code in program.expects if code == program.rule]
    of_rule = [f for f in findings if f.get("code") == program.rule]
    for finding in of_rule:
        if any(same_file(finding["path"], file) and finding["start"]["line"] == line for file, line in wanted):
            return "right-line"
    return "elsewhere" if of_rule else "missed"


def describe(finding: dict) -> str:
    return f"{os.path.relpath(finding['path'], HERE)}:{finding['start']['line']} {finding['code']}"


def measure(programs: Sequence[Program]) -> dict:
    rows = []
    for program, ok in pairs(programs):
        findings = run_gradlint(program)
        ok_findings = run_gradlint(ok) if ok else []
        rows.append({
            "id": program.id,
            "rule": program.rule,
            "lang": program.lang,
            "held_out": program.held_out,
            "split": program.split,
            "outcome": classify(program, findings),
            "other_findings": [describe(f) for f in findings if f.get("code") != program.rule],
            "false_findings_on_ok": [describe(f) for f in ok_findings],
        })
    return {"programs": rows, "totals": totals(rows)}


def totals(rows: Sequence[dict]) -> dict:
    def count(selected):
        selected = list(selected)
        outcome = {k: sum(r["outcome"] == k for r in selected) for k in ("right-line", "elsewhere", "missed")}
        outcome["programs"] = len(selected)
        outcome["ok_programs_with_false_findings"] = sum(bool(r["false_findings_on_ok"]) for r in selected)
        return outcome

    result = {"all": count(rows), "dev": count(r for r in rows if not r["held_out"]),
              "held_out": count(r for r in rows if r["held_out"]),
              "promoted": count(r for r in rows if r.get("split") == "promoted")}
    for lang in sorted({r.get("lang", "python") for r in rows}):
        result[lang] = count(r for r in rows if r.get("lang", "python") == lang)
    for rule in sorted({r["rule"] for r in rows}):
        result[rule] = count(r for r in rows if r["rule"] == rule)
    return result


def print_measurement(result: dict) -> None:
    print(f"{'program':52} {'rule':6} {'split':8} outcome")
    for row in result["programs"]:
        split = row.get("split", "held-out" if row["held_out"] else "dev")
        print(f"{row['id']:52} {row['rule']:6} {split:8} {row['outcome']}")
        for finding in row["other_findings"]:
            print(f"{'':68} other finding: {finding}")
        for finding in row["false_findings_on_ok"]:
            print(f"{'':68} FALSE finding on _ok: {finding}")
    print()
    print(f"{'':14} {'programs':>8} {'right line':>10} {'elsewhere':>9} {'missed':>6} {'_ok with false findings':>24}")
    for key, t in result["totals"].items():
        print(f"{key:14} {t['programs']:8} {t['right-line']:10} {t['elsewhere']:9} {t['missed']:6} "
              f"{t['ok_programs_with_false_findings']:24}")


# ---------------------------------------------------------------- --confirm


def innermost_frame(stderr: str, files: Sequence[str]) -> Optional[Tuple[str, int]]:
    """The last traceback frame that lies in one of the program's files."""
    last = None
    for line in stderr.splitlines():
        match = _FRAME.match(line)
        if match and any(same_file(match.group("path"), f) for f in files):
            last = (match.group("path"), int(match.group("line")))
    return last


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b")


def final_error(stderr: str) -> str:
    """The exception torch raised: its first line and any continuation lines (`load_state_dict` wraps
    the messages it caught in indented lines after its own)."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if _EXCEPTION_LINE.match(line)]
    if not starts:
        return lines[-1].strip() if lines else ""
    return "\n".join(line.strip() for line in lines[starts[-1]:])


def execute(program: Program) -> subprocess.CompletedProcess:
    if program.is_package:
        command = [sys.executable, "-m", f"{program.id}.main"]
    else:
        command = [sys.executable, program.path]
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)


def check_raises(program: Program, done: subprocess.CompletedProcess) -> List[str]:
    problems = []
    error = program.header.get("error", "")
    if done.returncode == 0:
        return [f"ran clean; expected {error}"]
    last = final_error(done.stderr)
    kind, _, message = error.partition(": ")
    if not (last.startswith(kind + ":") and message in last):
        problems.append(f"raised `{last[:160]}`; expected `{error}`")
    where = innermost_frame(done.stderr, program.files())
    expected = program.expected_line()
    if expected is None:
        problems.append("no single expect line (or raises-here) to compare the traceback with")
    elif where is None or not (same_file(where[0], expected[0]) and where[1] == expected[1]):
        got = f"{os.path.relpath(where[0], HERE)}:{where[1]}" if where else "no frame in the program"
        problems.append(f"raised at {got}; expected {os.path.relpath(expected[0], HERE)}:{expected[1]}")
    return problems


def cpp_unit(cpp_pairs: Sequence[Tuple[Program, Optional[Program]]]) -> Tuple[str, List[str]]:
    """All C++ programs as one translation unit: each in its own namespace, its `oracle_run` bound
    under the program's id (one extension build costs ~45 s here, so it is built once)."""
    includes, bodies, names = set(), [], []
    for program in [p for pair in cpp_pairs for p in pair if p is not None]:
        with open(program.path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        includes.update(line for line in lines if line.startswith("#include"))
        body = "\n".join("" if line.startswith("#include") else line for line in lines)  # keeps line numbers
        bodies.append(f"namespace {program.id} {{\n#line 1 \"{program.path}\"\n{body}\n}}  // namespace {program.id}")
        names.append(program.id)
    source = "\n".join(sorted(includes) + ["#include <torch/extension.h>"] + bodies)
    bindings = "\n".join(f'  m.def("{name}", &{name}::oracle_run);' for name in names)
    return source + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + bindings + "\n}\n", names


def confirm_cpp(cpp_pairs: Sequence[Tuple[Program, Optional[Program]]]) -> Dict[str, List[str]]:
    """Build the C++ programs once and run each: the bug raises its header's message, the twin runs clean."""
    import tempfile

    from torch.utils import cpp_extension

    source, _names = cpp_unit(cpp_pairs)
    build_dir = os.path.join(tempfile.gettempdir(), "gradlint_bug_reports_cpp")
    os.makedirs(build_dir, exist_ok=True)
    module = cpp_extension.load_inline("gradlint_bug_reports", cpp_sources=[source], build_directory=build_dir)
    problems: Dict[str, List[str]] = {}
    for program, ok in cpp_pairs:
        found = problems.setdefault(program.id, [])
        message = program.header.get("error", "").partition(": ")[2]
        try:
            getattr(module, program.id)()
            found.append(f"ran clean; expected {program.header.get('error')}")
        except RuntimeError as error:
            if message not in str(error):
                found.append(f"raised `{str(error)[:160]}`; expected `{message}`")
        if ok is None:
            found.append("no corrected program beside it")
        else:
            try:
                getattr(module, ok.id)()
            except RuntimeError as error:
                found.append(f"{ok.id} does not run clean: {str(error)[:160]}")
    return problems


def confirm(programs: Sequence[Program], build_cpp: bool = False) -> int:
    failures = confirmed = skipped = 0
    cpp_pairs = [(p, ok) for p, ok in pairs(programs) if p.lang == "cpp"]
    cpp_problems = confirm_cpp(cpp_pairs) if build_cpp and cpp_pairs else {}
    for program, ok in pairs(programs):
        if program.lang == "cpp" and build_cpp:
            problems = cpp_problems[program.id]
            failures += bool(problems)
            confirmed += not problems
            print(f"{program.id:52} {'confirmed' if not problems else 'NOT confirmed'} (C++, no line check)")
            for problem in problems:
                print(f"{'':54}{problem}")
            continue
        if program.lang != "python":
            print(f"{program.id:52} skipped ({program.lang}: --cpp builds it, ~45 s)")
            skipped += 1
            continue
        problems = check_raises(program, execute(program))
        if ok is None:
            problems.append("no corrected program beside it")
        else:
            done = execute(ok)
            if done.returncode != 0:
                problems.append(f"{ok.id} does not run clean: {final_error(done.stderr)[:160]}")
        failures += bool(problems)
        confirmed += not problems
        print(f"{program.id:52} {'confirmed' if not problems else 'NOT confirmed'}")
        for problem in problems:
            print(f"{'':54}{problem}")
    print(f"{confirmed} confirmed, {failures} not confirmed, {skipped} skipped")
    return 1 if failures else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--confirm", action="store_true", help="run each program under torch and check its header")
    parser.add_argument("--cpp", action="store_true", help="with --confirm: also build and run the C++ programs")
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    parser.add_argument("--list", action="store_true", help="list the programs (id, rule, split, source) as a table")
    args = parser.parse_args(argv)
    programs = discover()
    if args.list:
        print("| program | rule | lang | split | source |\n|---|---|---|---|---|")
        for program, _ok in pairs(programs):
            split = program.split
            print(f"| {program.id} | {program.rule} | {program.lang} | {split} | {program.header.get('source', '')} |")
        return 0
    if args.confirm:
        return confirm(programs, build_cpp=args.cpp)
    result = measure(programs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_measurement(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
