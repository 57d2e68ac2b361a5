"""The real bug reports of bench/bug_reports/ under `gradlint trace`: is each error annotated
with the line that really made the tensor, and does `check --compare-trace` agree with the
static findings of the same program?

    python bench/trace_bug_reports.py          # a table, then the totals
    python bench/trace_bug_reports.py --json

Where each program's tensor was made was read from the program (not from the tracer): ORIGINS
names, per program, the source text of that line and of its `inference_mode` statement or
decorator. A program missing from ORIGINS is listed as not stated and left out of the
percentage. Needs torch.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BUG_REPORTS = os.path.join(HERE, "bug_reports")
STATIC_RULES = ("GL201", "GL202", "GL203", "GL204", "GL301")

# program id -> (the line that made the tensor, its inference_mode line), as source text
ORIGINS: Dict[str, Tuple[str, str]] = {
    "checkpoint_offload_buffers_made_in_logprob_pass": ('buffer = torch.empty_like(x, device="cpu")',
                                                        "with torch.inference_mode():"),
    "distill_teacher_probs_under_inference_mode": (
        "return F.softmax(logits / self.temperature, dim=-1)", "with torch.inference_mode():"),
    "inference_only_loader_then_unfreeze": (
        "self.embed = nn.Embedding(vocab, dim)",
        'with torch.inference_mode(config.get("inference_mode", True)):'),
    "qat_encodings_calibrated_under_inference_mode": (
        "self.encoding_min, self.encoding_max = x.min(), x.max()", "with torch.inference_mode():"),
    "quantized_lm_cache_allocated_in_decorated_loader": (
        "self.key_states = torch.zeros(1, max_seq_len, dim)", "@torch.inference_mode()"),
    "rome_key_pass_regrows_rotary_buffers": (
        'self.register_buffer("cos_cached", emb.cos(), persistent=False)',
        "with torch.inference_mode():"),
    "rope_cache_passed_into_checkpointed_layers": ("cached = (freqs.cos(), freqs.sin())",
                                                   "with torch.inference_mode():"),
    "vocab_expansion_decorated_inference_mode": (
        "new_head = nn.Linear(dim, vocab + num_new_tokens, bias=False)", "@torch.inference_mode"),
    "confusion_matrix_state_index_update": (
        "self.confusion_matrix = torch.zeros(self.num_classes, self.num_classes, dtype=torch.int64)",
        "with torch.inference_mode():"),
    "course_test_step_loss_average": ("test_loss += loss_fn(test_pred, y)",
                                      "with torch.inference_mode():"),
    "depth_head_on_decorated_backbone": ("return self.backbone(img)", "@torch.inference_mode()"),
    "detr_multiscale_resize_in_train_loop": (
        'samples = F.interpolate(samples, size=(size, size), mode="bilinear", align_corners=False)',
        "with torch.inference_mode():"),
    "diffusion_server_weight_update": (
        'self.cpu_buffers[name] = param.detach().to("cpu", copy=True)',
        "with torch.inference_mode():"),
    "grpo_old_logps_under_inference_mode": (
        "self._pos_cached = torch.cos(t / 10000 ** (torch.arange(self.dim) / self.dim))",
        "with torch.inference_mode():"),
    "keypoint_softargmax_grid_cache": (
        'self.hw_grid = torch.stack(torch.meshgrid(offsets, offsets, indexing="ij")).view(2, -1).t()',
        "with torch.inference_mode():"),
    "minimind_grpo_generate_then_logprobs": (
        "ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)", "@torch.inference_mode()"),
    "nnunet_fold_ensemble_cpu": ("logits = torch.zeros((2, *data.shape[1:]))",
                                 "with torch.inference_mode():"),
    "peft_adapter_reenabled_after_engine": ("self.model.to(self.dtype)", "@torch.inference_mode()"),
    "predictor_model_built_in_stream_inference": (
        "return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))",
        "@torch.inference_mode()"),
    "rotary_cache_eval_then_train": ("self._cos_cached = torch.cos(freqs)",
                                     "with torch.inference_mode():"),
    "sglang_warmup_lazy_workspace": ("self._workspace = torch.empty(num_tokens, head_dim)",
                                     "with torch.inference_mode():"),
}


def _bug_reports_runner():
    spec = importlib.util.spec_from_file_location("bug_reports_run", os.path.join(BUG_REPORTS, "run.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _code(place: Optional[dict]) -> Optional[str]:
    if not place:
        return None
    with open(place["file"], encoding="utf-8") as handle:
        text = handle.read().splitlines()[place["line"] - 1]
    return text.split("  #", 1)[0].strip()


def trace(program, report: str) -> subprocess.CompletedProcess:
    target = ["-m", f"{program.id}.main"] if program.is_package else [program.path]
    return subprocess.run([sys.executable, "-m", "gradlint.trace", "--report", report, *target],
                          cwd=BUG_REPORTS, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONHASHSEED="0"))


def compare(program, report: str) -> str:
    done = subprocess.run([sys.executable, "-m", "gradlint", "check", "--no-cache", "--select", "ALL",
                           "--compare-trace", report, program.path],
                          capture_output=True, text=True, timeout=600)
    statuses = [line.split()[0] for line in done.stdout.splitlines()
                if line.startswith(("reported", "missed", "unchecked"))]
    return statuses[0] if statuses else f"no error ({done.stderr.strip()[-200:]})"


def measure_one(runner, program, folder: str) -> dict:
    report = os.path.join(folder, f"{program.id}.json")
    done = trace(program, report)
    errors = json.load(open(report, encoding="utf-8"))["errors"] if os.path.exists(report) else []
    expected = ORIGINS.get(program.id)
    first = errors[0] if errors else None
    row = {"id": program.id, "rule": program.rule, "returncode": done.returncode,
           "kind": first["kind"] if first else None,
           "annotated": bool(first and first["origin"]),
           "origin": _code(first["origin"]) if first else None,
           "region": _code(first["region"]) if first else None,
           "origin_stated": expected is not None}
    row["right_origin"] = bool(expected and first and (row["origin"], row["region"]) == expected)
    row["compare_trace"] = compare(program, report) if first else "no error"
    row["static"] = runner.classify(program, runner.run_gradlint(program))
    # compare-trace counts any inference-tensor finding on the error's lines; the bug-report
    # benchmark counts the header's rule on the marked line: they agree when both say found.
    row["agree"] = (row["compare_trace"] == "reported") == (row["static"] == "right-line")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    runner = _bug_reports_runner()
    programs = [program for program, _ok in runner.pairs(runner.discover(BUG_REPORTS))
                if program.lang == "python"]
    with tempfile.TemporaryDirectory(prefix="gradlint-trace-bugs-") as folder:
        rows = [measure_one(runner, program, folder) for program in programs]
    stated = [row for row in rows if row["origin_stated"]]
    totals = {"programs": len(rows), "annotated": sum(row["annotated"] for row in rows),
              "origin_stated": len(stated), "right_origin": sum(row["right_origin"] for row in stated),
              "compare_reported": sum(row["compare_trace"] == "reported" for row in rows),
              "static_right_line": sum(row["static"] == "right-line" for row in rows),
              "agree": sum(row["agree"] for row in rows)}
    if options.json:
        print(json.dumps({"programs": rows, "totals": totals}, indent=1))
        return 0
    for row in rows:
        origin = "right" if row["right_origin"] else ("n/a" if not row["origin_stated"] else "WRONG")
        print(f"{row['id']:<40} {row['kind'] or '-':<10} origin {origin:<6} compare-trace "
              f"{row['compare_trace']:<9} static {row['static']:<11} {'agree' if row['agree'] else 'DISAGREE'}")
        if row["origin_stated"] and not row["right_origin"]:
            print(f"    traced: {row['origin']!r} / {row['region']!r}")
    share = 100.0 * totals["right_origin"] / totals["origin_stated"] if stated else 0.0
    print(f"right origin and region: {totals['right_origin']}/{totals['origin_stated']} ({share:.0f}%); "
          f"annotated: {totals['annotated']}/{totals['programs']}; compare-trace reported "
          f"{totals['compare_reported']}, static right line {totals['static_right_line']}, "
          f"agree on {totals['agree']}/{totals['programs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
