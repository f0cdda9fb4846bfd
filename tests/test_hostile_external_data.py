"""Issue 16, finding 10: nothing outside the model's folder is read, by any path.

Every external tensor (initializer, sparse initializer, Constant node, If body, local
function) is checked by the one loader before onnxruntime sees the model; onnxruntime's
own checks are tested separately as the second wall (they are why its floor is 1.32).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import onnxruntime as ort
import pytest

from onnxstudio.errors import ModelLoadError
from onnxstudio.model.external import ORT_MEMORY_TAG
from onnxstudio.model.load import read_checked
from onnxstudio.runner.pipeline import Pipeline, RunRequest
from onnxstudio.runner.session import Session
from tests.hostile import (
    PLACES,
    fifo,
    run_cli,
    save_in,
    secret_outside,
    weights_file,
    with_external_w1,
)

# `export` in this process would otherwise make a bare QGuiApplication, which later
# widget tests in the same session cannot use.
pytestmark = pytest.mark.usefixtures("qapp")

Setup = Callable[[Path], str]  # makes the hostile target in the model folder, returns location


def _traversal(folder: Path) -> str:
    secret_outside(folder.parent)
    return "../secret.bin"


def _absolute(folder: Path) -> str:
    return str(secret_outside(folder.parent))


def _symlinked_file(folder: Path) -> str:
    (folder / "w.bin").symlink_to(secret_outside(folder.parent))
    return "w.bin"


def _symlinked_folder(folder: Path) -> str:
    secret_outside(folder.parent)
    (folder / "data").symlink_to(folder.parent)
    return "data/secret.bin"


def _fifo(folder: Path) -> str:
    fifo(folder / "w.bin")
    return "w.bin"


HOSTILE: dict[str, tuple[Setup, str]] = {
    "traversal": (_traversal, "outside the model's folder"),
    "absolute": (_absolute, "outside the model's folder"),
    "symlinked file": (_symlinked_file, "outside the model's folder"),
    "symlinked folder": (_symlinked_folder, "outside the model's folder"),
    "fifo": (_fifo, "not a regular file"),
    "device": (lambda _f: "/dev/zero", "outside the model's folder"),
    "nul byte": (lambda f: weights_file(f).name + "\x00../secret.bin", "NUL byte"),
    "ort memory tag": (lambda _f: ORT_MEMORY_TAG, "memory, not a file"),
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_loader_refuses_every_hostile_reference_everywhere(tmp_path: Path, kind: str,
                                                           place: str) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    setup, reason = HOSTILE[kind]
    path = save_in(folder, PLACES[place](setup(folder)))
    with pytest.raises(ModelLoadError, match=reason):
        read_checked(path)
    with pytest.raises(ModelLoadError, match=reason):  # the session checks before ort
        Session(path)


@pytest.mark.parametrize("command", ["info", "export", "run", "profile", "compare", "extract"])
def test_every_command_refuses_a_traversal_in_one_line(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    path = save_in(folder, with_external_w1("../secret.bin", offset="0", length="128"))
    secret_outside(tmp_path)
    args = {"info": ["--json"], "export": [tmp_path / "out.svg"], "run": ["--random"],
            "profile": ["--random"], "compare": ["--random"],
            "extract": [tmp_path / "part.onnx", "--outputs", "y"]}[command]
    result = run_cli(command, path, *args)
    assert result.code == 2
    lines = result.err.splitlines()
    assert len(lines) == 1 and "outside the model's folder" in lines[0], result.err
    assert "secret" not in result.out


def test_a_symlinked_model_reads_next_to_the_link_as_onnxruntime_does(tmp_path: Path) -> None:
    real, elsewhere = tmp_path / "real", tmp_path / "elsewhere"
    real.mkdir()
    elsewhere.mkdir()
    weights_file(real)
    target = save_in(real, with_external_w1("w.bin", offset="0", length="128"))
    read_checked(target)  # fine where it lives
    link = elsewhere / "model.onnx"
    link.symlink_to(target)
    (elsewhere / "w.bin").symlink_to(secret_outside(tmp_path))
    with pytest.raises(ModelLoadError, match="outside the model's folder"):
        read_checked(link)
    assert run_cli("run", "--random", link).code == 2


def test_weights_inside_the_folder_still_run(tmp_path: Path) -> None:
    weights_file(tmp_path)
    path = save_in(tmp_path, with_external_w1("w.bin", offset="0", length="128"))
    outcome = Pipeline().execute(RunRequest(path, random=True))[0]
    assert outcome.views and outcome.views[0].name == "y"


@pytest.mark.parametrize(("info", "reason"), [
    ({"offset": "abc", "length": "128"}, "offset 'abc' is not a non-negative integer"),
    ({"offset": "1e3"}, "offset '1e3' is not a non-negative integer"),
    ({"offset": "-4", "length": "128"}, "not a non-negative integer"),
    ({"offset": "0", "length": "12.5"}, "length '12.5' is not a non-negative integer"),
    ({"offset": "200", "length": "128"}, "is shorter than"),
    ({"offset": "0", "length": "999999999999999999999999"}, "is shorter than"),
])
def test_offset_and_length_are_integers_within_the_file(tmp_path: Path, info: dict[str, str],
                                                         reason: str) -> None:
    weights_file(tmp_path)
    path = save_in(tmp_path, with_external_w1("w.bin", **info))
    with pytest.raises(ModelLoadError, match=reason):
        read_checked(path)
    result = run_cli("extract", path, tmp_path / "part.onnx", "--outputs", "y")
    assert result.code == 2 and "extraction failed" not in result.err
    assert result.err.count("\n") == 1


@pytest.mark.parametrize("kind", ["traversal", "absolute", "symlinked file", "device"])
def test_onnxruntime_itself_refuses_escapes_as_a_second_wall(tmp_path: Path, kind: str) -> None:
    """The installed onnxruntime (pyproject's floor) refuses these on its own; 1.23 and
    older read them (checked by hand: see the issue's closing note)."""
    folder = tmp_path / "models"
    folder.mkdir()
    path = save_in(folder, with_external_w1(HOSTILE[kind][0](folder), offset="0",
                                            length="128"))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    with pytest.raises(Exception, match="External data path"):
        ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def test_a_fifo_model_file_is_refused_without_blocking(tmp_path: Path) -> None:
    path = fifo(tmp_path / "model.onnx")
    with pytest.raises(ModelLoadError, match="not a regular file"):
        read_checked(path)
    assert os.path.exists(path)
