"""A job's child that cannot start (no interpreter, no memory, a locked-down machine):
each job says so in one line naming the model, and leaves no folder behind."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from onnxstudio.errors import EditError, RunError
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.compare import RunConfig
from onnxstudio.runner.edit_check import checks_isolated
from onnxstudio.runner.inspect_child import isolated
from onnxstudio.runner.optimised import save_optimised_isolated
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile_child import profile_isolated
from tests.conftest import REPO

SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"

JOBS: dict[str, tuple[Callable[[], Any], type[Exception], str]] = {
    "profile": (lambda: profile_isolated(RunRequest(SAMPLE, random=True), cancel=CancelToken()),
                RunError, "the profiler could not start"),
    "compare": (lambda: isolated("compare", RunRequest(SAMPLE, random=True), RunConfig("ort"),
                                 RunConfig("ort", optimization="disabled"), 1e-3, None,
                                 model=SAMPLE, cancel=CancelToken()),
                RunError, "onnxruntime's process could not start"),
    "edit check": (lambda: checks_isolated(SAMPLE.read_bytes(), SAMPLE, CancelToken()),
                   EditError, "the edited model could not be checked"),
    "optimise": (lambda: save_optimised_isolated(SAMPLE, cancel=CancelToken()),
                 RunError, "onnxruntime's optimiser could not start"),
}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_child_that_cannot_start_is_one_line_and_leaves_no_folder(
        job: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(12, "Cannot allocate memory")

    before = set(Path(tempfile.gettempdir()).glob("onnxstudio-*"))
    monkeypatch.setattr(subprocess, "Popen", refuse)
    call, error, words = JOBS[job]
    with pytest.raises(error) as raised:
        call()
    line = str(raised.value)
    assert line.startswith(f"{SAMPLE.name}: {words} (") and "Cannot allocate memory" in line
    assert "\n" not in line
    assert set(Path(tempfile.gettempdir()).glob("onnxstudio-*")) <= before
