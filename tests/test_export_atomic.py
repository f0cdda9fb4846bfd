"""Atomic writes: no temp files left, the original untouched on failure, the model protected."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from onnxstudio.errors import ExportError
from onnxstudio.export.atomic import atomic_path, atomic_write, check_destination
from onnxstudio.export.formats import export_layout, format_for_path
from onnxstudio.export.options import ExportCancelled, ExportOptions
from tests.export_support import chain_layout


def test_replaces_atomically_and_leaves_no_temp(tmp_path: Path) -> None:
    out = tmp_path / "a.txt"
    out.write_text("old")
    atomic_write(out, "new")
    assert out.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_new_file_gets_normal_permissions(tmp_path: Path) -> None:
    out = atomic_write(tmp_path / "b.txt", b"x")
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


def test_failure_keeps_original_and_removes_temp(tmp_path: Path) -> None:
    out = tmp_path / "a.txt"
    out.write_text("precious")

    def boom(stream) -> None:  # type: ignore[no-untyped-def]
        stream.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(out, boom)
    assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_cancel_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "g.dot"
    out.write_text("precious")
    with pytest.raises(ExportCancelled):
        export_layout(chain_layout(), None, out, ExportOptions(), cancel=lambda: True)
    assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["g.dot"]


def test_empty_result_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="nothing was written"), atomic_path(tmp_path / "e"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_refuses_the_model_itself(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"model")
    link = tmp_path / "same.onnx"
    link.symlink_to(model)
    for dest in (model, link, tmp_path / "." / "m.onnx"):
        with pytest.raises(ExportError, match="model file itself"):
            check_destination(dest, [model])
    assert model.read_bytes() == b"model"


def test_bad_destinations(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="does not exist"):
        check_destination(tmp_path / "nope" / "x.svg")
    with pytest.raises(ExportError, match="is a folder"):
        check_destination(tmp_path)


def test_format_from_extension() -> None:
    assert format_for_path("a.SVG") == "svg" and format_for_path("a.gv") == "dot"
    assert format_for_path("a.txt", "png") == "png"
    with pytest.raises(ExportError, match="cannot tell the format"):
        format_for_path("a.bmp")
