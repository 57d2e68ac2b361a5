"""Run gradlint over real repositories at pinned commits and hold its findings to the triage.

    python bench/corpus/run.py                          # default rules, every repository
    python bench/corpus/run.py --select ALL --repos pytorch/ao,NVIDIA/apex
    python bench/corpus/run.py --update-triage          # append unknown findings as `untriaged`

Each repository of repos.toml is extracted at its commit from the mirror's git directory
(once; reused when already there) into the corpus folder, and the installed
`gradlint check` runs on it as a separate process, as users run it, so that a crash shows as
one. Every finding is then looked up in triage.tsv by (repo, commit, path, line, code):

- NEW: not in the triage;                          fails the run
- LOST: triaged `true` and no longer reported;     fails the run
- gone: triaged `false`/`debatable` and no longer reported (a fix landed; remove the row)
- crashes (GL999, exit status 2 or other, a traceback on stderr); fail the run

Exit status: 0 nothing changed, 1 NEW, LOST or crashes, 2 a bad manifest or triage file.
Findings triaged `untriaged` (written by --update-triage) are counted, never failed on: fill
in their verdicts. Then migrations.py's section runs (GL101's fix against the migrations
upstream made); a site file missing under <corpus>/migrations fails the run.

Other scripts import `load_manifest`, `materialize` and `run_gradlint` from here.
"""
from __future__ import annotations

import argparse
import collections
import csv
import hashlib
import importlib
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from typing import Counter, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MANIFEST = os.path.join(HERE, "repos.toml")
DEFAULT_TRIAGE = os.path.join(HERE, "triage.tsv")
DEFAULT_MIRROR = "/work/.mirror"
DEFAULT_CORPUS = "/work/corpus"
TRIAGE_COLUMNS = ("repo", "commit", "path", "line", "code", "verdict", "why")
VERDICTS = ("true", "false", "debatable", "untriaged")
TIMEOUT_SECONDS = 1800
FILES_CHECKED = re.compile(r"\((\d+) files?\)|in (\d+) files?")


class CorpusError(Exception):
    """A manifest, triage file or repository that cannot be used: exit 2, or the repo is skipped."""


@dataclass(frozen=True)
class Repo:
    name: str  # the triage's `repo` column
    source: str  # github owner/name
    commit: str
    subtrees: Tuple[str, ...] = ()
    note: str = ""


# (repo, commit, path, line, code); `line` is "cell N:L" for a notebook's finding.
Key = Tuple[str, str, str, str, str]


@dataclass
class Run:
    """One `gradlint check` on one tree."""
    findings: List[dict]
    files: Optional[int]
    wall: float
    cpu: float
    returncode: int
    stderr: str
    crashes: List[str] = field(default_factory=list)


def load_manifest(path: str) -> List[Repo]:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CorpusError(f"{path}: {error}") from None
    repos, names = [], set()
    for number, entry in enumerate(data.get("repo", []), 1):
        try:
            repo = Repo(entry["name"], entry["source"], entry["commit"],
                        tuple(entry.get("subtrees", ())), entry.get("note", ""))
        except KeyError as missing:
            raise CorpusError(f"{path}: repo #{number} has no {missing}") from None
        if not re.fullmatch(r"[0-9a-f]{40}", repo.commit):
            raise CorpusError(f"{path}: {repo.name}: commit must be 40 hex digits")
        if repo.name in names:
            raise CorpusError(f"{path}: {repo.name} appears twice")
        names.add(repo.name)
        repos.append(repo)
    return repos


def mirror_git_dir(repo: Repo, mirror: str) -> str:
    return os.path.join(mirror, repo.source.replace("/", "+"), "repo")


def corpus_folder(repo: Repo, corpus: str) -> str:
    folder = f"{repo.source.replace('/', '+')}@{repo.commit[:8]}"
    if repo.subtrees:  # a different subtree choice is a different extraction
        folder += "-" + hashlib.sha1("\0".join(repo.subtrees).encode()).hexdigest()[:6]
    return os.path.join(corpus, folder)


def materialize(repo: Repo, mirror: str = DEFAULT_MIRROR, corpus: str = DEFAULT_CORPUS) -> str:
    """The repository's tree at its commit (only its subtrees, if any), extracted once.
    The mirrors leave out their largest files (data, images, weights), which makes `git archive`
    refuse the whole commit; so the blobs are read one by one and the absent ones listed in
    `<folder>.absent`."""
    target = corpus_folder(repo, corpus)
    if os.path.isdir(target):
        return target
    git_dir = mirror_git_dir(repo, mirror)
    if not os.path.isdir(git_dir):
        raise CorpusError(f"{repo.name}: no mirror at {git_dir} (bring it with the search tool's fetch)")
    partial = target + ".part"  # renamed into place only when complete
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    try:
        absent = _extract(git_dir, repo.commit, repo.subtrees, partial)
    except (CorpusError, OSError) as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise CorpusError(f"{repo.name}: cannot extract {repo.commit[:8]}: {error}") from None
    with open(target + ".absent", "w", encoding="utf-8") as handle:
        handle.writelines(f"{path}\n" for path in absent)
    os.rename(partial, target)
    return target


def absent_files(repo: Repo, corpus: str = DEFAULT_CORPUS) -> List[str]:
    """The files of the commit that the mirror did not hold, hence not extracted."""
    try:
        with open(corpus_folder(repo, corpus) + ".absent", encoding="utf-8") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def _extract(git_dir: str, commit: str, subtrees: Sequence[str], into: str) -> List[str]:
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit, "--", *subtrees],
                             capture_output=True)
    if listing.returncode != 0:
        raise CorpusError(listing.stderr.decode(errors="replace").strip())
    entries = []  # (mode, object id, path) of blobs; submodules (commits) have no content here
    for record in listing.stdout.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, kind, object_id = meta.split()
            if kind == b"blob":
                entries.append((mode, object_id, os.fsdecode(path)))
    reader = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask():  # written from a thread: the answers must be read while the questions go in
        for _, object_id, _ in entries:
            reader.stdin.write(object_id + b"\n")
        reader.stdin.close()

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    absent = []
    for mode, _, path in entries:
        header = reader.stdout.readline().split()
        if len(header) < 3:  # "<id> missing"
            absent.append(path)
            continue
        content = reader.stdout.read(int(header[2]))
        reader.stdout.read(1)  # the newline after each object
        destination = os.path.join(into, path)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        if mode == b"120000":
            os.symlink(os.fsdecode(content), destination)
            continue
        with open(destination, "wb") as handle:
            handle.write(content)
        if mode == b"100755":
            os.chmod(destination, 0o755)
    asking.join()
    if reader.wait() != 0:
        raise CorpusError(f"git cat-file exited with {reader.returncode}")
    return absent


def gradlint_command(spelled: Optional[str] = None) -> List[str]:
    """The installed console script, as users run it (python -m gradlint where it is not on PATH)."""
    if spelled:
        return shlex.split(spelled)
    script = shutil.which("gradlint")
    return [script] if script else [sys.executable, "-m", "gradlint"]


def run_gradlint(tree: str, select: Optional[str] = None, command: Optional[List[str]] = None,
                 timeout: float = TIMEOUT_SECONDS) -> Run:
    """`gradlint check --output-format json --no-cache` on `tree`; finding paths relative to it."""
    argv = [*(command or gradlint_command()), "check", "--output-format", "json", "--no-cache"]
    if select:
        argv += ["--select", select]
    argv.append(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        process = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tree)
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode(errors="replace") if isinstance(expired.stderr, bytes) else ""
        return Run([], None, time.perf_counter() - started, 0.0, -1, stderr or "",
                   [f"timed out after {timeout:.0f}s"])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    crashes = []
    try:
        findings = json.loads(process.stdout)
    except json.JSONDecodeError:
        findings = []
        crashes.append("stdout is not JSON")
    for finding in findings:
        finding["path"] = os.path.relpath(os.path.join(tree, finding["path"]), tree)
        if finding["code"] == "GL999":
            crashes.append(f"GL999 {finding['path']}:{finding['start']['line']}: {finding['message']}")
    if process.returncode not in (0, 1):
        crashes.append(f"exit status {process.returncode}")
    if "Traceback (most recent call last)" in process.stderr:
        crashes.append("traceback on stderr")
    counted = FILES_CHECKED.search(process.stderr)
    files = int(counted.group(1) or counted.group(2)) if counted else None
    return Run(findings, files, wall, cpu, process.returncode, process.stderr, crashes)


def finding_key(repo: Repo, finding: dict) -> Key:
    line = str(finding["start"]["line"])
    if finding.get("cell") is not None:
        line = f"cell {finding['cell'] + 1}:{line}"
    return (repo.name, repo.commit, finding["path"], line, finding["code"])


def load_triage(path: str) -> Dict[Key, List[Tuple[str, str]]]:
    """key -> [(verdict, why)], one per triaged finding (a line can hold two of one code)."""
    triage: Dict[Key, List[Tuple[str, str]]] = collections.defaultdict(list)
    if not os.path.exists(path):
        return triage
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(rows, None)
        if header is not None and tuple(header) != TRIAGE_COLUMNS:
            raise CorpusError(f"{path}: the header must be {' '.join(TRIAGE_COLUMNS)}")
        for number, row in enumerate(rows, 2):
            if not row or row[0].startswith("#"):
                continue
            if len(row) != len(TRIAGE_COLUMNS):
                raise CorpusError(f"{path}:{number}: {len(row)} columns, expected {len(TRIAGE_COLUMNS)}")
            if row[5] not in VERDICTS:
                raise CorpusError(f"{path}:{number}: verdict {row[5]!r} is not one of {', '.join(VERDICTS)}")
            triage[tuple(row[:5])].append((row[5], row[6]))
    return triage


def append_triage(path: str, keys: Sequence[Key]) -> None:
    new_file = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="", encoding="utf-8") as handle:
        if new_file:
            handle.write("\t".join(TRIAGE_COLUMNS) + "\n")
        for key in keys:
            handle.write("\t".join((*key, "untriaged", "")) + "\n")


@dataclass
class Comparison:
    new: List[Tuple[Key, str]] = field(default_factory=list)  # (key, message)
    lost: List[Tuple[Key, str]] = field(default_factory=list)  # (key, why)
    gone: List[Tuple[Key, str, str]] = field(default_factory=list)  # (key, verdict, why)
    verdicts: Dict[str, Counter[str]] = field(default_factory=dict)  # code -> verdict (or "new") -> count


def compare(found: Sequence[Tuple[Key, str]], triage: Dict[Key, List[Tuple[str, str]]],
            compared: set, selected: frozenset) -> Comparison:
    """`found`: (key, message) of every finding of this run; `compared`: the (repo, commit) pairs
    run; `selected`: the codes that ran. Triage rows outside both are not expected."""
    result = Comparison()
    remaining = {key: list(rows) for key, rows in triage.items()}
    for key, message in found:
        rows = remaining.get(key)
        if rows:
            verdict, _ = rows.pop(0)
            result.verdicts.setdefault(key[4], collections.Counter())[verdict] += 1
        else:
            result.new.append((key, message))
            result.verdicts.setdefault(key[4], collections.Counter())["new"] += 1
    for key, rows in sorted(remaining.items()):
        if key[:2] not in compared or key[4] not in selected:
            continue
        for verdict, why in rows:
            if verdict == "true":
                result.lost.append((key, why))
            elif verdict in ("false", "debatable"):
                result.gone.append((key, verdict, why))
    return result


def selected_codes(select: Optional[str]) -> frozenset:
    from gradlint.settings import resolve_selection

    chosen = None if select is None else [part for part in select.split(",") if part.strip()]
    return resolve_selection(chosen, [], [])


def _where(key: Key) -> str:
    return f"{key[0]} {key[2]}:{key[3]} {key[4]}"


def _precision_table(verdicts: Dict[str, Counter[str]], longest: Dict[str, int]) -> List[str]:
    """Verdicts per rule, and its longest message (the text output's line is about that long)."""
    lines = [f"{'code':<7}{'true':>6}{'false':>7}{'debat.':>8}{'untri.':>8}{'new':>6}{'precision':>11}"
             f"{'longest message':>17}"]
    for code in sorted(verdicts):
        count = verdicts[code]
        triaged = count["true"] + count["false"] + count["debatable"]
        precision = f"{count['true'] / triaged:.1%}" if triaged else "-"
        lines.append(f"{code:<7}{count['true']:>6}{count['false']:>7}{count['debatable']:>8}"
                     f"{count['untriaged']:>8}{count['new']:>6}{precision:>11}{longest.get(code, 0):>17}")
    return lines


def _migration_section(options) -> int:
    """GL101's fix against upstream's migrations (migrations.py beside this file, when present):
    the problems are the site files missing under <corpus>/migrations."""
    path = os.path.join(HERE, "migrations.py")
    if options.no_migrations or not os.path.exists(path):
        return 0
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    module = importlib.import_module("migrations")
    summary = module.run_migration_sites(root=os.path.join(options.corpus, "migrations"))
    print()
    module.report(summary)
    return summary.figures["missing"]


def parse_args(argv: Optional[Sequence[str]] = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--select", help="passed to gradlint check --select (default: its default rules)")
    parser.add_argument("--repos", help="comma-separated repo names from the manifest (default: all)")
    parser.add_argument("--manifest", default=DEFAULT_MANIFEST)
    parser.add_argument("--triage", default=DEFAULT_TRIAGE)
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="where <owner>+<name>/repo git dirs are")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS, help="where extracted trees go")
    parser.add_argument("--gradlint", help="the command to run (default: gradlint on PATH)")
    parser.add_argument("--update-triage", action="store_true",
                        help="append NEW findings to the triage with verdict `untriaged`")
    parser.add_argument("--no-migrations", action="store_true", help="skip the migration-sites section")
    parser.add_argument("--json", metavar="FILE", help="also write the summary to FILE as JSON")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # progress shows per repository
    try:
        repos = load_manifest(options.manifest)
        triage = load_triage(options.triage)
        selected = selected_codes(options.select)
    except (CorpusError, ValueError) as error:
        print(f"corpus: error: {error}", file=sys.stderr)
        return 2
    if options.repos:
        wanted = [name.strip() for name in options.repos.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {repo.name for repo in repos})
        if unknown:
            print(f"corpus: error: not in the manifest: {', '.join(unknown)}", file=sys.stderr)
            return 2
        repos = [repo for repo in repos if repo.name in wanted]
    command = gradlint_command(options.gradlint)
    found: List[Tuple[Key, str]] = []
    compared, summary, crashed = set(), [], 0
    for repo in repos:
        try:
            tree = materialize(repo, options.mirror, options.corpus)
        except CorpusError as error:
            print(f"{repo.name:<34} unavailable: {error}")
            summary.append({"repo": repo.name, "commit": repo.commit, "crashes": [str(error)]})
            crashed += 1
            continue
        run = run_gradlint(tree, options.select, command)
        compared.add((repo.name, repo.commit))
        per_rule = collections.Counter(finding["code"] for finding in run.findings)
        found.extend((finding_key(repo, finding), finding["message"]) for finding in run.findings)
        rules = " ".join(f"{code}:{count}" for code, count in sorted(per_rule.items())) or "-"
        files = "?" if run.files is None else str(run.files)
        absent = len(absent_files(repo, options.corpus))
        print(f"{repo.name:<34} {repo.commit[:8]}  files {files:>6}  wall {run.wall:6.1f}s  "
              f"cpu {run.cpu:6.1f}s  crashes {len(run.crashes)}  {rules}"
              + (f"  ({absent} files absent from the mirror)" if absent else ""))
        for crash in run.crashes:
            print(f"    CRASH {crash}")
        if run.crashes:
            crashed += 1
            for line in run.stderr.strip().splitlines()[-5:]:
                print(f"    | {line}")
        summary.append({"repo": repo.name, "commit": repo.commit, "files": run.files,
                        "wall": round(run.wall, 2), "cpu": round(run.cpu, 2),
                        "returncode": run.returncode, "findings": dict(per_rule), "crashes": run.crashes,
                        "absent_files": absent})
    comparison = compare(found, triage, compared, selected)
    for key, message in comparison.new:
        print(f"NEW   {_where(key)}  {message}")
    for key, why in comparison.lost:
        print(f"LOST  {_where(key)}  (was true: {why})")
    for key, verdict, why in comparison.gone:
        print(f"gone  {_where(key)}  (was {verdict}: {why}; remove the row)")
    if options.update_triage and comparison.new:
        append_triage(options.triage, [key for key, _ in comparison.new])
        print(f"appended {len(comparison.new)} finding(s) to {options.triage} as untriaged")
    print()
    longest: Dict[str, int] = {}
    for key, message in found:
        longest[key[4]] = max(longest.get(key[4], 0), len(message))
    print("\n".join(_precision_table(comparison.verdicts, longest)))
    problems = _migration_section(options)
    print(f"\n{len(repos)} repositories, {len(found)} findings: {len(comparison.new)} new, "
          f"{len(comparison.lost)} lost, {len(comparison.gone)} gone, {crashed} with crashes")
    if options.json:
        document = {"repos": summary, "new": [list(key) for key, _ in comparison.new],
                    "lost": [list(key) for key, _ in comparison.lost],
                    "gone": [list(key) for key, _, _ in comparison.gone],
                    "verdicts": {code: dict(count) for code, count in comparison.verdicts.items()}}
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1)
    failed = crashed or comparison.lost or problems or (comparison.new and not options.update_triage)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
