"""`onnxstudio export` from a shell without a display: exit codes and one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import save, tiny_mlp
from tests.conftest import REPO, shared_model


@pytest.fixture(autouse=True, params=["fork", "no-fork"])
def fork_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs twice: as a Linux shell runs the command (forks), and on the
    path without fork that Windows, macOS beside Qt and ONNXSTUDIO_NO_FORK=1 take."""
    if request.param == "no-fork":
        monkeypatch.setenv("ONNXSTUDIO_NO_FORK", "1")
    else:
        monkeypatch.delenv("ONNXSTUDIO_NO_FORK", raising=False)
    return str(request.param)


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "onnxstudio", "export", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)


def _one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("onnxstudio: ") and needle in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.fixture()
def model(tmp_path: Path) -> Path:
    return save(tiny_mlp(), tmp_path / "mlp.onnx")


def test_exports_every_format_headless(model: Path, tmp_path: Path) -> None:
    for ext in ("svg", "png", "pdf", "dot", "json"):
        out = tmp_path / f"mlp.{ext}"
        proc = run_cli(model, out, "--title", "--theme", "dark", "--direction", "LR")
        assert proc.returncode == 0, proc.stderr
        assert out.stat().st_size > 100 and f"wrote {out}" in proc.stdout
    assert (tmp_path / "mlp.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "mlp.png").read_bytes().startswith(b"\x89PNG")
    data = json.loads((tmp_path / "mlp.json").read_text())
    assert data["direction"] == "LR"
    assert {n["op_type"] for n in data["nodes"]} >= {"MatMul", "Relu", "Softmax"}


def test_json_of_a_real_model(tmp_path: Path) -> None:
    out = tmp_path / "mnist.json"
    proc = run_cli(shared_model("zoo/mnist/mnist.onnx"), out)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    node = next(n for n in data["nodes"] if n["op_type"] == "Conv")
    assert {"id", "name", "op_type", "box"} <= node.keys()
    assert {"x", "y", "width", "height"} <= node["box"].keys()


def test_refuses_to_overwrite_the_model(model: Path, tmp_path: Path) -> None:
    before = hashlib.sha256(model.read_bytes()).hexdigest()
    proc = run_cli(model, model, "--format", "png")
    _one_line_error(proc, "refusing to write over the model file itself")
    link = tmp_path / "link.onnx"
    link.symlink_to(model)
    _one_line_error(run_cli(model, link, "--format", "dot"), "model file itself")
    assert hashlib.sha256(model.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.onnx", "mlp.onnx"]


def test_failures_are_one_line(model: Path, tmp_path: Path) -> None:
    _one_line_error(run_cli(model, tmp_path / "x.bmp"), "cannot tell the format")
    _one_line_error(run_cli(tmp_path / "missing.onnx", tmp_path / "x.svg"), "not found")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01 definitely not protobuf \xff" * 10)
    _one_line_error(run_cli(junk, tmp_path / "x.svg"), "junk.onnx")
    _one_line_error(run_cli(model, tmp_path / "no" / "x.svg"), "does not exist")
    _one_line_error(run_cli(model, tmp_path / "x.png", "--scale", "0"), "scale")
    assert not (tmp_path / "x.svg").exists() and not (tmp_path / "x.png").exists()


def test_bad_option_is_a_usage_error(model: Path, tmp_path: Path) -> None:
    proc = run_cli(model, tmp_path / "x.svg", "--theme", "sepia")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_svg_dot_and_json_export_without_pyside6(model: Path, tmp_path: Path) -> None:
    """SVG, DOT and JSON are Qt-free: they work where PySide6 cannot even be imported."""
    from tests.test_core_without_qt import BLOCK_QT

    script = BLOCK_QT + f"""
from onnxstudio.cli import main
assert main(["export", {str(model)!r}, {str(tmp_path / "g.svg")!r}]) == 0
assert main(["export", {str(model)!r}, {str(tmp_path / "g.dot")!r}]) == 0
assert main(["export", {str(model)!r}, {str(tmp_path / "g.json")!r}, "--expand-all"]) == 0
assert not any(k.startswith("PySide6") for k in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "g.svg").read_text().count('class="node"') >= 3
    assert (tmp_path / "g.dot").read_text().count("->") >= 5
    assert json.loads((tmp_path / "g.json").read_text())["nodes"]
