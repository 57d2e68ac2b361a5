"""The runtime oracle's rules: what a fixture claims (its `oracle:` directives), and how a
run of the original and a run of gradlint's fixed version are judged against the claim.

Nothing here imports torch: the programs run in subprocesses (see `oracle_bootstrap.py`),
and this module only reads their reports, so the judging logic is tested without torch.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# The messages measured in docs/torch-semantics.md (torch 2.13.0), quoted verbatim.
# A fixture may name one by its key in `oracle: raises RuntimeError: E_INPLACE`.
MESSAGES: Dict[str, str] = {
    "E_INPLACE": (
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
        "clone to get a normal tensor before doing inplace update.See "
        "https://github.com/pytorch/rfcs/pull/17 for more details."
    ),
    "E_SAVE": (
        "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
        "inference mode in computation tracked by autograd. To work around this, you can make a "
        "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
        "`torch.inference_mode()`."
    ),
    "E_RG": "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    "E_VER": "Inference tensors do not track version counter.",
    "E_MODIFIED": (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of Mul, is at version 1; expected "
        "version 0 instead. Hint: enable anomaly detection to find the operation that failed to "
        "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    ),
    "E_VIEW": (
        "A view was created in inference mode and is being modified inplace in normal mode. Given "
        "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
        "code by moving both the view and the inplace either both inside the inference_mode block "
        "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
        "be tracked)."
    ),
    "E_NOGRADFN": "element 0 of tensors does not require grad and does not have a grad_fn",
}

# Parts of a quoted message that depend on the program, not on the rule: E_MODIFIED names
# the tensor's type and shape, the node that saved it (`Mul` in Python, `Mul1` from C++) and
# the versions. They match any value; the rest must match exactly.
_VARIABLE_PARTS = {
    "E_MODIFIED": (
        ("[torch.FloatTensor [3]]", r"\[.+?\]\]"),
        ("output 0 of Mul,", r"output \d+ of \w+,"),
        ("version 1;", r"version \d+;"),
        ("version 0 instead", r"version \d+ instead"),
    ),
}


def message_pattern(key: str) -> "re.Pattern[str]":
    pattern = re.escape(MESSAGES[key])
    for literal, variable in _VARIABLE_PARTS.get(key, ()):
        pattern = pattern.replace(re.escape(literal), variable)
    return re.compile(pattern)


_DIRECTIVE = re.compile(r"(?:#|//)\s*oracle:\s*(?P<kind>[A-Za-z][\w-]*)(?P<rest>.*)$")
_RAISES = re.compile(r"(?P<type>[A-Za-z_][\w.]*)\s*:\s*(?P<message>\S.*)$")
_MESSAGE_KEY = re.compile(r"E_[A-Z]+")
KINDS = ("raises", "before-prints", "after-prints", "before-warns", "unguarded-fails", "clean", "skip",
         "origin", "region")


@dataclass
class Claim:
    """What a fixture's `oracle:` lines say must happen."""
    raises_type: Optional[str] = None
    raises_message: Optional[str] = None          # as written: a key or a literal substring
    before_prints: List[str] = field(default_factory=list)
    after_prints: List[str] = field(default_factory=list)
    clean: bool = False
    # text the original writes to stderr and the fixed program does not (a deprecation warning)
    before_warns: List[str] = field(default_factory=list)
    # the original with its legacy guards deleted must not finish cleanly (C++ redispatch)
    unguarded_fails: bool = False
    skip_reason: Optional[str] = None
    # `gradlint trace` (tests/oracle/test_trace_runtime.py): the lines that made the tensor
    # the raised error is about, and the inference_mode region it was made in
    origin_line: Optional[int] = None
    region_line: Optional[int] = None
    errors: List[str] = field(default_factory=list)  # malformed or contradictory directives

    @property
    def stated(self) -> bool:
        return bool(self.raises_type or self.before_prints or self.after_prints
                    or self.before_warns or self.clean or self.skip_reason)

    def matches_message(self, message: str) -> bool:
        if self.raises_message in MESSAGES:
            return message_pattern(self.raises_message).search(message) is not None
        return self.raises_message in message


def parse_claim(text: str) -> Claim:
    claim = Claim()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        kind, rest = match.group("kind"), match.group("rest").strip()
        where = f"line {number}"
        if kind == "raises":
            raised = _RAISES.match(rest)
            if raised is None:
                claim.errors.append(f"{where}: `oracle: raises` needs `<ExceptionType>: <message>`")
                continue
            message = raised.group("message").strip()
            if _MESSAGE_KEY.fullmatch(message) and message not in MESSAGES:
                claim.errors.append(f"{where}: unknown message key {message} "
                                    f"(known: {', '.join(sorted(MESSAGES))})")
                continue
            if claim.raises_type is not None:
                claim.errors.append(f"{where}: a second `oracle: raises` (a program raises once)")
                continue
            claim.raises_type, claim.raises_message = raised.group("type"), message
        elif kind in ("before-prints", "after-prints"):
            if not rest:
                claim.errors.append(f"{where}: `oracle: {kind}` needs the line it prints")
                continue
            (claim.before_prints if kind == "before-prints" else claim.after_prints).append(rest)
        elif kind == "before-warns":
            if not rest:
                claim.errors.append(f"{where}: `oracle: before-warns` needs the text it writes to stderr")
                continue
            claim.before_warns.append(rest)
        elif kind == "unguarded-fails":
            claim.unguarded_fails = True
        elif kind == "clean":
            claim.clean = True
        elif kind in ("origin", "region"):
            attribute = f"{kind}_line"
            if getattr(claim, attribute) is not None:
                claim.errors.append(f"{where}: a second `oracle: {kind}`")
                continue
            setattr(claim, attribute, number)
        elif kind == "skip":
            claim.skip_reason = rest.lstrip(":").strip() or "(no reason given)"
            if claim.skip_reason == "(no reason given)":
                claim.errors.append(f"{where}: `oracle: skip` must say why")
        else:
            claim.errors.append(f"{where}: unknown directive `oracle: {kind}` "
                                f"(known: {', '.join(KINDS)})")
    if claim.clean and (claim.raises_type or claim.before_prints):
        claim.errors.append("`oracle: clean` contradicts `raises`/`before-prints`")
    if (claim.origin_line is None) != (claim.region_line is None) or (
            claim.origin_line is not None and not claim.raises_type):
        claim.errors.append("`oracle: origin` and `oracle: region` go together, on a fixture "
                            "that claims `raises`")
    if claim.raises_type and claim.before_prints:
        claim.errors.append("state either `raises` or `before-prints` for the original, not both")
    return claim


@dataclass
class RunReport:
    """One subprocess run of a program (original or fixed)."""
    stdout: str
    stderr: str
    returncode: Optional[int]           # None: killed at the time limit
    seconds: float
    exception: Optional[Tuple[str, str, str]] = None   # (name, qualified name, message)
    thread_exceptions: Tuple[Tuple[str, str, str], ...] = ()
    raised_line: Optional[int] = None  # the program's own line in the traceback (Python)

    @property
    def lines(self) -> List[str]:
        return [line.rstrip() for line in self.stdout.splitlines()]

    @property
    def raised(self) -> Optional[Tuple[str, str, str]]:
        if self.exception is not None:
            return self.exception
        return self.thread_exceptions[0] if self.thread_exceptions else None

    def describe_failure(self) -> Optional[str]:
        """Why this run did not finish cleanly, or None when it did."""
        if self.returncode is None:
            return f"timed out after {self.seconds:.0f} s"
        raised = self.raised
        if raised is not None:
            where = "" if self.exception is not None else " (in a thread)"
            return f"raised {raised[1]}{where}: {_shorten(raised[2])}"
        if self.returncode != 0:
            tail = "\n".join(self.stderr.strip().splitlines()[-5:])
            return f"exited with code {self.returncode}\n{tail}"
        return None


def read_exception_report(path: str) -> Tuple[Optional[Tuple[str, str, str]], Tuple, Optional[int]]:
    """(the exception, those raised in threads, the program's line in its traceback)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None, (), None
    unpack = lambda item: (item["name"], item["qualified"], item["message"])  # noqa: E731
    main = unpack(data["exception"]) if data.get("exception") else None
    line = data["exception"].get("line") if data.get("exception") else None
    return main, tuple(unpack(item) for item in data.get("thread_exceptions", ())), line


@dataclass
class Verdict:
    """The outcome columns of the report table, and what went wrong."""
    claim_shown: Optional[bool] = None      # raised / printed as claimed (None: nothing claimed)
    fixed: bool = False                     # gradlint fix changed the program
    fixed_clean: Optional[bool] = None      # the fixed program ran without error
    results_equal: Optional[bool] = None    # stdout agrees up to the original's failure
    compared_lines: int = 0
    unguarded_failed: Optional[bool] = None  # the guard-deleted variant failed (None: not run)
    problems: List[str] = field(default_factory=list)


def _shorten(text: str, limit: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " ..."


def _missing_lines(wanted: Sequence[str], lines: Sequence[str]) -> List[str]:
    present = {line.strip() for line in lines}
    return [line for line in wanted if line.strip() not in present]


def comparable_lines(lines: Sequence[str], state_lines: Sequence[str]) -> List[str]:
    """The printed results, without the lines that state the (intentionally different)
    before or after state."""
    stated = {line.strip() for line in state_lines}
    return [line for line in lines if line.strip() not in stated]


def judge(claim: Claim, before: RunReport, after: Optional[RunReport],
          unguarded: Optional[RunReport] = None) -> Verdict:
    """Judge the original's run against the claim, the fixed program's run (None when
    gradlint fix changed nothing) against the original's, and, for `unguarded-fails`, the
    run of the original with its legacy guards deleted (it must not finish cleanly)."""
    verdict = Verdict(problems=list(claim.errors))
    if claim.unguarded_fails:
        if unguarded is None:
            verdict.problems.append("`oracle: unguarded-fails` is stated, but the guard-deleted "
                                    "program was not run")
        else:
            verdict.unguarded_failed = unguarded.describe_failure() is not None
            if not verdict.unguarded_failed:
                verdict.problems.append("with its guards deleted the program still ran cleanly: "
                                        "nothing shows that the guard must stay")
    failure = before.describe_failure()
    if claim.raises_type:
        raised = before.raised
        if raised is None:
            verdict.claim_shown = False
            verdict.problems.append(
                f"original: expected {claim.raises_type}: {claim.raises_message}, but it "
                + (failure or "finished without error"))
        elif claim.raises_type not in (raised[0], raised[1]) or not claim.matches_message(raised[2]):
            verdict.claim_shown = False
            verdict.problems.append(
                f"original: expected {claim.raises_type}: {claim.raises_message}, but it "
                f"raised {raised[1]}: {_shorten(raised[2])}")
        else:
            verdict.claim_shown = True
    else:
        if failure is not None:
            verdict.problems.append(f"original: expected to run without error, but it {failure}")
        missing = _missing_lines(claim.before_prints, before.lines)
        if missing:
            verdict.problems.append(f"original: did not print {missing}; it printed {before.lines}")
        if claim.before_prints:
            verdict.claim_shown = failure is None and not missing

    for text in claim.before_warns:
        if text not in before.stderr:
            verdict.problems.append(f"original: did not write {text!r} to stderr")
        if after is not None and text in after.stderr:
            verdict.problems.append(f"fixed: still writes {text!r} to stderr")

    if after is None:
        if claim.after_prints:
            verdict.problems.append("`oracle: after-prints` is stated, but gradlint fix changes nothing")
        return verdict
    verdict.fixed = True
    after_failure = after.describe_failure()
    missing = _missing_lines(claim.after_prints, after.lines)
    verdict.fixed_clean = after_failure is None and not missing
    if after_failure is not None:
        verdict.problems.append(f"fixed: expected to run without error, but it {after_failure}")
    if missing:
        verdict.problems.append(f"fixed: did not print {missing}; it printed {after.lines}")

    original = comparable_lines(before.lines, claim.before_prints)
    fixed = comparable_lines(after.lines, claim.after_prints)
    # Up to the point of failure: a program that raised printed only a prefix of its results.
    if before.raised is not None or before.returncode != 0:
        fixed = fixed[:len(original)]
    verdict.compared_lines = len(original)
    verdict.results_equal = original == fixed
    if not verdict.results_equal:
        verdict.problems.append(
            "results differ: the fixed program printed\n  " + "\n  ".join(fixed)
            + "\nwhere the original printed\n  " + "\n  ".join(original))
    return verdict
