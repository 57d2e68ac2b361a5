"""Where a flow finding's value came from travels with it (issue 15 item 10): the region
that made it, the statement that made it, the calls that carried it, as `note:` lines in
text, `related` in JSON, `relatedLocations` in SARIF (schema-valid), and within the cell
in a notebook; a warm cache gives them back unchanged."""
import json

import pytest

from gradlint.diagnostics import LineIndex

# The update torch rejects is on line 13; the tensor was made on line 6 inside `predict`,
# under the region of line 5, and carried out by the call on line 12.
PROGRAM = """import torch


def predict(model, batch):
    with torch.inference_mode():
        logits = model(batch).softmax(-1)
    return logits


def evaluate(model, batch):
    model.eval()
    scores = predict(model, batch)
    scores /= 2
    return scores
"""


@pytest.fixture
def program(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evaluate.py").write_text(PROGRAM, encoding="utf-8")


def _json(run_cli, *paths):
    return json.loads(run_cli("check", "--no-cache", "--output-format", "json", *paths).stdout)


def _lines(related):
    return [(place["start"]["line"], place["message"]) for place in related]


def test_json_names_the_region_the_making_statement_and_the_call(program, run_cli):
    (finding,) = _json(run_cli, "evaluate.py")
    assert (finding["code"], finding["start"]["line"]) == ("GL201", 13)
    assert _lines(finding["related"]) == [
        (5, "inference mode entered: `torch.inference_mode()`"),
        (6, "the inference tensor is made here"),
        (12, "returned by `predict()`"),
    ]
    region = finding["related"][0]
    assert (region["start"]["column"], region["end"]["column"]) == (10, 32)  # `torch.inference_mode()`


def test_text_prints_a_note_line_per_place(program, run_cli):
    lines = run_cli("check", "--no-cache", "evaluate.py").stdout.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("evaluate.py:13:"))
    assert lines[at + 1:at + 4] == [
        "    evaluate.py:5:10: note: inference mode entered: `torch.inference_mode()`",
        "    evaluate.py:6:9: note: the inference tensor is made here",
        "    evaluate.py:12:14: note: returned by `predict()`",
    ]


def test_sarif_related_locations_are_schema_valid_and_match_json(program, run_cli):
    from test_reporters import _schema_errors

    document = json.loads(run_cli("check", "--no-cache", "--output-format", "sarif", "evaluate.py").stdout)
    assert _schema_errors(document) == []
    (result,) = document["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [place["id"] for place in related] == [0, 1, 2]
    assert [(place["physicalLocation"]["region"]["startLine"], place["message"]["text"]) for place in related] \
        == _lines(_json(run_cli, "evaluate.py")[0]["related"])
    assert all(place["physicalLocation"]["artifactLocation"]["uri"] == "evaluate.py" for place in related)


def test_a_helper_that_does_the_update_is_named_where_it_does_it(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scale.py").write_text(
        "import torch\n\ndef halve(t):\n    t /= 2\n\nwith torch.inference_mode():\n"
        "    features = torch.ones(3)\nhalve(features)\n", encoding="utf-8")
    (finding,) = _json(run_cli, "scale.py")
    assert finding["start"]["line"] == 4  # the update torch rejects: the line of the traceback
    assert (8, "passed to `halve()`") in _lines(finding["related"])
    assert (7, "the inference tensor is made here") in _lines(finding["related"])


def test_places_in_an_imported_module_carry_its_path(tmp_path, monkeypatch, run_cli):
    """A value an imported module made: its places there are related locations with that
    module's path, in JSON, SARIF (schema-valid) and text."""
    from test_reporters import _schema_errors

    monkeypatch.chdir(tmp_path)
    (tmp_path / "predict.py").write_text(PROGRAM.split("def evaluate")[0], encoding="utf-8")
    (tmp_path / "evaluate.py").write_text(
        "from predict import predict\n\n\ndef evaluate(model, batch):\n"
        "    scores = predict(model, batch)\n    scores /= 2\n    return scores\n", encoding="utf-8")
    (finding,) = _json(run_cli, ".")
    assert (finding["path"], finding["start"]["line"]) == ("evaluate.py", 6)
    elsewhere = [(place.get("path"), place["start"]["line"]) for place in finding["related"]]
    assert (str(tmp_path / "predict.py"), 6) in elsewhere and (None, 5) in elsewhere
    document = json.loads(run_cli("check", "--no-cache", "--output-format", "sarif", ".").stdout)
    assert _schema_errors(document) == []
    uris = {place["physicalLocation"]["artifactLocation"]["uri"]
            for place in document["runs"][0]["results"][0]["relatedLocations"]}
    assert len(uris) == 2 and any(uri.endswith("predict.py") for uri in uris)
    notes = [line for line in run_cli("check", "--no-cache", ".").stdout.splitlines() if "note:" in line]
    assert "    predict.py:6:9: note: the inference tensor is made here" in notes


def test_a_finding_without_an_origin_has_an_empty_list(project, run_cli):
    findings = _json(run_cli, "model.py")
    assert [finding["related"] for finding in findings] == [[]]


def test_the_cache_gives_the_related_locations_back(program, run_cli, tmp_path):
    cold = json.loads(run_cli("check", "--cache-dir", str(tmp_path / "cache"), "--output-format", "json",
                              "evaluate.py").stdout)
    warm = json.loads(run_cli("check", "--cache-dir", str(tmp_path / "cache"), "--output-format", "json",
                              "evaluate.py").stdout)
    assert warm == cold and len(cold[0]["related"]) == 3


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Cache\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n", "with torch.inference_mode():\n", "    table = torch.zeros(4)\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["table.add_(1)\n"]},
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def test_in_a_notebook_the_places_are_in_their_own_cell(tmp_path, monkeypatch, run_cli):
    from test_reporters import _schema_errors

    monkeypatch.chdir(tmp_path)
    text = json.dumps(NOTEBOOK, indent=1)
    (tmp_path / "cache.ipynb").write_text(text, encoding="utf-8")
    (finding,) = _json(run_cli, "cache.ipynb")
    assert finding["cell"] == 2
    assert [(place["cell"], place["start"]["line"], place["start"]["column"]) for place in finding["related"]] \
        == [(1, 2, 6), (1, 3, 5)]
    notes = [line for line in run_cli("check", "--no-cache", "cache.ipynb").stdout.splitlines() if "note:" in line]
    assert notes[0] == "    cache.ipynb:cell 2:2:6: note: inference mode entered: `torch.inference_mode()`"
    document = json.loads(run_cli("check", "--no-cache", "--output-format", "sarif", "cache.ipynb").stdout)
    assert _schema_errors(document) == []
    region = document["runs"][0]["results"][0]["relatedLocations"][1]["physicalLocation"]["region"]
    assert LineIndex(text).line_text(region["startLine"]).strip() == '"    table = torch.zeros(4)\\n"'


CPP = """#include <torch/torch.h>

torch::Tensor postprocess(torch::jit::script::Module& detector, const torch::Tensor& image) {
  torch::Tensor boxes;
  {
    c10::InferenceMode guard;
    boxes = detector.forward({image}).toTensor();
  }
  boxes.mul_(2);
  return boxes;
}
"""


def test_cpp_flow_findings_name_the_guard_and_the_assignment(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "post.cpp").write_text(CPP, encoding="utf-8")
    (finding,) = [f for f in _json(run_cli, "post.cpp") if f["code"] == "GL201"]
    assert finding["start"]["line"] == 9
    assert _lines(finding["related"]) == [(6, "InferenceMode enabled here"), (7, "the inference tensor is assigned here")]


def test_gl101_names_the_call_that_reaches_the_dispatcher_as_a_related_location(run_cli):
    import os

    from ecosystem_samples import ROOT

    path = os.path.join(ROOT, "fixtures", "cpp", "GL101", "scaled_mul_autograd.cpp")
    (finding,) = [f for f in _json(run_cli, path) if f["start"]["line"] == 26]
    assert finding["message"] == "`forward` calls `scaled_mul()`: use `at::AutoDispatchBelowADInplaceOrView`"
    assert _lines(finding["related"]) == [(27, "`scaled_mul()` reaches `Dispatcher::singleton()`")]
    assert finding["related"][0]["start"]["column"] == 19
