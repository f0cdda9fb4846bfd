"""`onnxstudio diff A B [--json]`: the JSON schema, exit 0/1/2, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import diff_edits
from tests.builders import save, tiny_mlp
from tests.conftest import REPO


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnxstudio", "diff", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_identical_models_exit_0(tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    b = save(tiny_mlp(), tmp_path / "b.onnx")
    result = _cli(str(a), str(b))
    assert result.returncode == 0, result.stderr
    assert "5 matched, 0 changed, 0 added, 0 removed" in result.stdout
    assert result.stdout.rstrip().endswith("identical")


def test_json_schema_and_exit_1_when_they_differ(tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    diff_edits.perturb_weight(edited, "MatMul")
    diff_edits.rename_everything(edited)
    b = save(edited, tmp_path / "b.onnx")
    result = _cli(str(a), str(b), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"summary", "nodes", "graph", "patterns"}
    assert report["summary"] == {"matched": 3, "changed": 2, "added": 0, "removed": 0}
    assert set(report["graph"]) == {"inputs", "outputs", "opsets", "metadata"}
    for entry in report["nodes"]:
        assert set(entry) == {"status", "a", "b", "op_type", "changes"}
        for change in entry["changes"]:
            assert set(change) == {"kind", "name", "a", "b"}
    changed = {e["a"]: e for e in report["nodes"] if e["status"] == "changed"}
    softmax = changed["/head/Softmax"]
    assert softmax["b"] == "op_4"
    assert softmax["changes"] == [{"kind": "attribute", "name": "axis", "a": -1, "b": 1}]
    [weight] = changed["/head/MatMul"]["changes"]
    assert weight["kind"] == "weight" and weight["name"] == "W2"
    assert weight["a"]["shape"] == [8, 3] and weight["b"]["max_abs_diff"] == 0.5
    assert weight["a"]["hash"] != weight["b"]["hash"]
    [x] = report["graph"]["inputs"]
    assert x == {"status": "changed", "name": "x",
                 "a": {"name": "x", "dtype": "float32", "shape": ["batch", 4]},
                 "b": {"name": "renamed_0", "dtype": "float32", "shape": ["batch", 4]}}


def test_added_and_removed_nodes_have_null_on_the_other_side(tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    edited = tiny_mlp()
    diff_edits.remove_node(edited, "Relu")
    diff_edits.insert_after(edited, "MatMul", "Sigmoid", nth=1)
    b = save(edited, tmp_path / "b.onnx")
    report = json.loads(_cli(str(a), str(b), "--json").stdout)
    by_status = {e["status"]: e for e in report["nodes"] if e["status"] != "matched"}
    assert by_status["removed"]["a"] == "/layer1/Relu" and by_status["removed"]["b"] is None
    assert by_status["added"]["a"] is None and by_status["added"]["b"] == "inserted_Sigmoid"
    assert report["summary"] == {"matched": 4, "changed": 0, "added": 1, "removed": 1}


def test_a_node_swapped_in_place_is_a_changed_operator(tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    edited = tiny_mlp()
    diff_edits.remove_node(edited, "Relu")
    diff_edits.insert_after(edited, "Add", "Sigmoid")  # where the Relu was
    report = json.loads(_cli(str(a), str(save(edited, tmp_path / "b.onnx")), "--json").stdout)
    [swapped] = [e for e in report["nodes"] if e["status"] != "matched"]
    assert swapped["a"] == "/layer1/Relu" and swapped["b"] == "inserted_Sigmoid"
    assert swapped["changes"][0] == {"kind": "op_type", "name": "op_type",
                                     "a": "Relu", "b": "Sigmoid"}


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not a model at all\xff")
    for args in ((str(a), str(bad)), (str(a), str(tmp_path / "missing.onnx"))):
        result = _cli(*args, "--json")
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("onnxstudio: ")
        assert "Traceback" not in result.stderr and result.stdout == ""
