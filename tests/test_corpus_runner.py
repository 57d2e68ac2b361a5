"""bench/corpus/run.py, the corpus runner, on a small git repository made here: no network,
no corpus. Each case runs the runner as a subprocess, and the runner runs gradlint as one."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "bench", "corpus", "run.py")
HEADER = "repo\tcommit\tpath\tline\tcode\tverdict\twhy\n"

# Line 5 holds the one finding: GL402, the guard class used as a context manager.
EVALUATE = """\
import torch


def evaluate(model, x):
    with torch.no_grad:
        return model(x)
"""


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout.strip()


class Corpus:
    """A mirror holding one repository `acme/models`, its manifest, and a triage file."""

    def __init__(self, root):
        self.root = root
        source = root / "source"
        (source / "pkg").mkdir(parents=True)
        (source / "pkg" / "evaluate.py").write_text(EVALUATE)
        (source / "docs").mkdir()
        (source / "docs" / "evaluate_copy.py").write_text(EVALUATE)
        (source / "README.md").write_text("a large file the mirror may lack\n")
        self.mirror = root / "mirror"
        (self.mirror / "acme+models").mkdir(parents=True)
        # The git directory is the mirror's; its objects stay loose, so a test can remove one.
        _git("init", "-q", f"--separate-git-dir={self.mirror / 'acme+models' / 'repo'}", cwd=source)
        _git("add", ".", cwd=source)
        _git("commit", "-q", "-m", "one finding", cwd=source)
        self.commit = _git("rev-parse", "HEAD", cwd=source)
        self.corpus = root / "corpus"
        self.triage = root / "triage.tsv"
        self.manifest = root / "repos.toml"
        self.write_manifest(subtrees=["pkg"])

    def write_manifest(self, subtrees=()):
        listed = ", ".join(f'"{path}"' for path in subtrees)
        self.manifest.write_text(textwrap.dedent(f"""\
            [[repo]]
            name = "acme/models"
            source = "acme/models"
            commit = "{self.commit}"
            subtrees = [{listed}]
        """))

    def write_triage(self, *rows):
        self.triage.write_text(HEADER + "".join("\t".join(row) + "\n" for row in rows))

    def row(self, line="5", code="GL402", verdict="true", why="raises TypeError at the with"):
        return ("acme/models", self.commit, "pkg/evaluate.py", line, code, verdict, why)

    def run(self, *extra, gradlint=None):
        argv = [sys.executable, RUNNER, "--manifest", str(self.manifest), "--triage", str(self.triage),
                "--mirror", str(self.mirror), "--corpus", str(self.corpus),
                "--gradlint", gradlint or f"{sys.executable} -m gradlint", "--no-migrations", *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)


@pytest.fixture
def corpus(tmp_path):
    return Corpus(tmp_path)


def test_a_finding_missing_from_the_triage_is_new_and_fails(corpus):
    corpus.write_triage()
    result = corpus.run()
    assert result.returncode == 1, result.stdout + result.stderr
    new = next(line for line in result.stdout.splitlines() if line.startswith("NEW"))
    assert new.startswith("NEW   acme/models pkg/evaluate.py:5 GL402  ")
    message = new.split("GL402  ", 1)[1]
    row = next(line for line in result.stdout.splitlines() if line.startswith("GL402 "))
    assert row.split() == ["GL402", "0", "0", "0", "0", "1", "-", str(len(message))]  # longest, in characters
    (folder, listing) = sorted(os.listdir(corpus.corpus))  # no `.part` left behind
    assert listing == f"{folder}.absent"
    assert folder.startswith(f"acme+models@{corpus.commit[:8]}")
    assert not os.path.exists(corpus.corpus / folder / "docs")  # only the `pkg` subtree
    assert "files      1" in result.stdout


def test_a_triaged_finding_is_clean_and_counted_in_the_precision_table(corpus):
    corpus.write_triage(corpus.row())
    result = corpus.run("--json", str(corpus.root / "summary.json"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NEW" not in result.stdout and "LOST" not in result.stdout
    assert "GL402       1      0       0       0     0     100.0%" in result.stdout
    summary = json.loads((corpus.root / "summary.json").read_text())
    assert summary["repos"][0]["findings"] == {"GL402": 1}
    assert summary["repos"][0]["crashes"] == []


def test_a_true_finding_that_disappears_is_lost_and_fails(corpus):
    corpus.write_triage(corpus.row(), corpus.row(line="6"))
    result = corpus.run()
    assert result.returncode == 1
    assert "LOST  acme/models pkg/evaluate.py:6 GL402" in result.stdout


def test_a_false_finding_that_disappears_is_reported_gone_without_failing(corpus):
    corpus.write_triage(corpus.row(), corpus.row(line="6", verdict="false", why="not a guard"),
                        corpus.row(line="7", verdict="debatable", why="depends"))
    result = corpus.run()
    assert result.returncode == 0, result.stdout
    assert "gone  acme/models pkg/evaluate.py:6 GL402  (was false: not a guard" in result.stdout
    assert "gone  acme/models pkg/evaluate.py:7 GL402  (was debatable: depends" in result.stdout


def test_files_the_mirror_lacks_are_skipped_and_listed(corpus):
    """The mirrors leave out their largest blobs; the rest of the commit is still checked."""
    corpus.write_manifest()
    corpus.write_triage(corpus.row(), ("acme/models", corpus.commit, "docs/evaluate_copy.py", "5", "GL402",
                                       "true", "same as pkg"))
    objects = corpus.mirror / "acme+models" / "repo" / "objects"
    blob = _git("rev-parse", f"{corpus.commit}:README.md", cwd=corpus.root / "source")
    os.remove(objects / blob[:2] / blob[2:])
    result = corpus.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(1 files absent from the mirror)" in result.stdout
    (folder,) = [name for name in os.listdir(corpus.corpus) if not name.endswith(".absent")]
    assert sorted(os.listdir(corpus.corpus / folder)) == ["docs", "pkg"]
    assert (corpus.corpus / f"{folder}.absent").read_text() == "README.md\n"


def test_triage_rows_of_rules_not_selected_are_not_lost(corpus):
    corpus.write_triage(corpus.row())
    result = corpus.run("--select", "GL101")
    assert result.returncode == 0, result.stdout
    assert "LOST" not in result.stdout


def test_update_triage_appends_new_findings_as_untriaged(corpus):
    corpus.write_manifest()  # the whole tree: two findings
    corpus.write_triage(corpus.row())
    first = corpus.run("--update-triage")
    assert "NEW   acme/models docs/evaluate_copy.py:5 GL402" in first.stdout
    rows = corpus.triage.read_text().splitlines()
    assert rows[-1].split("\t")[2:6] == ["docs/evaluate_copy.py", "5", "GL402", "untriaged"]
    second = corpus.run()
    assert second.returncode == 0, second.stdout
    assert "NEW" not in second.stdout
    assert "GL402       1      0       0       1     0     100.0%" in second.stdout


def test_the_extraction_is_reused(corpus):
    corpus.write_triage(corpus.row())
    assert corpus.run().returncode == 0
    (folder, _) = sorted(os.listdir(corpus.corpus))
    os.remove(corpus.corpus / folder / "pkg" / "evaluate.py")  # not extracted again
    result = corpus.run()
    assert result.returncode == 1
    assert "LOST  acme/models pkg/evaluate.py:5 GL402" in result.stdout


@pytest.mark.parametrize("crash, seen", [
    ("print('[]'); raise SystemExit(2)", "CRASH exit status 2"),
    ("import sys; print('[]'); sys.stderr.write('Traceback (most recent call last):\\n'); sys.exit(1)",
     "CRASH traceback on stderr"),
    ("import json; print(json.dumps([{'path': 'pkg/evaluate.py', 'code': 'GL999', 'message': 'boom',"
     " 'start': {'line': 1, 'column': 1}}])); raise SystemExit(2)", "CRASH GL999 pkg/evaluate.py:1: boom"),
])
def test_crashes_are_reported_and_fail(corpus, crash, seen):
    fake = corpus.root / "fake_gradlint.py"
    fake.write_text(crash + "\n")
    corpus.write_triage()
    result = corpus.run(gradlint=f"{sys.executable} {fake}")
    assert result.returncode == 1
    assert seen in result.stdout
    assert "1 with crashes" in result.stdout


def test_a_bad_verdict_is_a_usage_error(corpus):
    corpus.write_triage(corpus.row(verdict="maybe"))
    result = corpus.run()
    assert result.returncode == 2
    assert "verdict 'maybe'" in result.stderr
