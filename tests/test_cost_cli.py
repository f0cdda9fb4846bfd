"""`onnxstudio cost`: the issue's JSON schema, the readable table, CSV, one-line errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from tests.builders import save, tiny_mlp
from tests.conftest import REPO, ladder_model
from tests.test_cost import conv_with_bias


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnxstudio", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_json_has_exactly_the_issue_schema(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    result = _cli("cost", str(path), "--json", "--dim", "batch=2")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) == {"total", "nodes", "scopes", "assumptions"}
    assert set(out["total"]) == {"macs", "params", "weight_bytes", "activation_bytes",
                                 "peak_activation_bytes"}
    assert all(set(n) == {"id", "name", "op_type", "macs", "params", "output_bytes"}
               for n in out["nodes"])
    assert all(set(s) == {"name", "depth", "macs", "params", "output_bytes"}
               for s in out["scopes"])
    assert out["total"]["macs"] == 2 * (4 * 8 + 8 * 3)
    assert out["total"]["params"] == 32 + 8 + 24
    assert {"name": "/layer1", "depth": 1, "macs": 64, "params": 40,
            "output_bytes": 3 * 2 * 8 * 4} in out["scopes"]
    assert "dimension batch = 2 (given)" in out["assumptions"]


def test_text_table_and_csv(tmp_path: Path) -> None:
    path = save(conv_with_bias(), tmp_path / "conv.onnx")
    table = tmp_path / "cost.csv"
    result = _cli("cost", str(path), "--csv", str(table))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("conv.onnx: 7.17K MACs, 0 element ops, 112 parameters")
    assert "Conv /block/conv/Conv" in result.stdout and "assumptions" in result.stdout
    rows = list(csv.DictReader(table.read_text().splitlines()))
    assert rows[0]["macs"] == "7168" and rows[0]["output_bytes"] == "1024"


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    result = _cli("cost", str(tmp_path / "missing.onnx"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "missing.onnx" in result.stderr
    result = _cli("cost", str(save(tiny_mlp(), tmp_path / "m.onnx")), "--dim", "batch")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_on_a_ladder_model() -> None:
    result = _cli("cost", str(ladder_model("bert12.onnx")), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["total"]["macs"] == sum(n["macs"] for n in out["nodes"]) > 0
    assert any(s["name"] == "/encoder/layer.0" for s in out["scopes"])
