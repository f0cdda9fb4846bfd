"""Fuzz `info --json` and `export` with seeded mutations of real models (issue 16).

CI runs FUZZ_CASES cases (a fixed seed, about a minute). A long run:

    ONNXSTUDIO_FUZZ_CASES=5000 ONNXSTUDIO_FUZZ_SEED=7 python -m pytest tests/test_fuzz.py -s

prints the count of each outcome. Every case runs the CLI's main in this process; a few
also run as real subprocesses so exit codes and stderr are the process's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.builders import tiny_mlp
from tests.conftest import REPO, SHARED_MODELS
from tests.fuzzing import Verdict, judge, mutate, parse_export
from tests.hostile import CliResult, body_pointing, run_cli, weights_file

# `export` in this process would otherwise make a bare QGuiApplication, which later
# widget tests in the same session cannot use.
pytestmark = pytest.mark.usefixtures("qapp")

FUZZ_CASES = int(os.environ.get("ONNXSTUDIO_FUZZ_CASES", "160"))
FUZZ_SEED = int(os.environ.get("ONNXSTUDIO_FUZZ_SEED", "16"))
# Small real models covering CNNs, ML operators, If/Loop/Scan bodies and functions.
REAL_SEEDS = [
    "packaged/onnxruntime_datasets/logreg_iris.onnx",
    "packaged/onnxruntime_datasets/sigmoid.onnx",
    "packaged/rapidocr/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    "node/node/test_if/model.onnx",
    "node/node/test_loop11/model.onnx",
    "node/node/test_scan_sum/model.onnx",
    "node/node/test_layer_normalization_4d_axis1_expanded_ver18/model.onnx",
    "node/node/test_ai_onnx_ml_label_encoder_string_int/model.onnx",
]
EXPORTS = (".svg", ".dot", ".json")


def _seed_models(with_real: bool) -> list[tuple[str, bytes]]:
    seeds = [("generated/tiny_mlp", tiny_mlp().SerializeToString()),
             ("generated/if_body", body_pointing("w.bin").SerializeToString())]
    if with_real:
        seeds += [(name, (SHARED_MODELS / name).read_bytes()) for name in REAL_SEEDS
                  if (SHARED_MODELS / name).is_file()]
    return seeds


def _case(tmp: Path, index: int, seeds: list[tuple[str, bytes]]) -> tuple[str, Path, str]:
    rng = random.Random(FUZZ_SEED * 1_000_003 + index)
    name, data = seeds[rng.randrange(len(seeds))]
    mutated, what = mutate(rng, data)
    folder = tmp / f"case{index}"
    folder.mkdir()
    weights_file(folder)  # a real weights file for mutations that name "w.bin"
    path = folder / "model.onnx"
    path.write_bytes(mutated)
    return f"case {index} ({name}: {what})", path, EXPORTS[index % len(EXPORTS)]


def _run_case(path: Path, suffix: str) -> list[Verdict]:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    verdicts = [judge(run_cli("info", "--json", path), json.loads)]
    out = path.with_name("diagram" + suffix)
    exported = run_cli("export", path, out)
    verdict = judge(exported)
    if verdict.outcome == "ok":
        try:
            parse_export(out)
        except Exception as exc:
            verdict = Verdict("finding", f"{out.name} does not parse ({exc})")
    verdicts.append(verdict)
    if hashlib.sha256(path.read_bytes()).hexdigest() != before:
        verdicts.append(Verdict("finding", "the model file was modified"))
    return verdicts


def _fuzz(tmp: Path, with_real: bool) -> Counter[str]:
    seeds = _seed_models(with_real)
    counts: Counter[str] = Counter()
    findings: list[str] = []
    for index in range(FUZZ_CASES):
        label, path, suffix = _case(tmp, index, seeds)
        for command, verdict in zip(("info", "export", "file"), _run_case(path, suffix),
                                    strict=False):
            counts[f"{command} {verdict.outcome}"] += 1
            if verdict.outcome == "finding":
                findings.append(f"{label} {command}: {verdict.detail}")
    print(f"\nfuzz seed {FUZZ_SEED}, {FUZZ_CASES} cases, {len(seeds)} seed models: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    assert not findings, "\n".join(findings[:20])
    return counts


@pytest.mark.slow
def test_fuzz_real_models(tmp_path: Path) -> None:
    if not SHARED_MODELS.is_dir():
        pytest.skip("../shared/models not available (the generated-model fuzz still runs)")
    counts = _fuzz(tmp_path, with_real=True)
    assert counts["info ok"] and counts["info refused"]  # both outcomes are exercised
    assert sum(counts.values()) >= 2 * FUZZ_CASES


def test_fuzz_generated_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "FUZZ_CASES", min(FUZZ_CASES, 40))
    counts = _fuzz(tmp_path, with_real=False)
    assert counts["export ok"] and counts["export refused"]


def test_fuzz_cases_as_real_processes(tmp_path: Path) -> None:
    """A handful of cases through a real process: exit code and stderr are its own."""
    seeds = _seed_models(with_real=False)
    for index in range(6):
        label, path, _suffix = _case(tmp_path, index, seeds)
        proc = subprocess.run([sys.executable, "-m", "onnxstudio", "info", "--json", str(path)],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        verdict = judge(CliResult(proc.returncode, proc.stdout, proc.stderr), json.loads)
        assert verdict.outcome != "finding", f"{label}: {verdict.detail}"
