"""A job reads the model file once (issue 13: the model is read once): a run's session
and input specs, a profile, a capture and a compare each parse it one time, however many
sessions they make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from onnxstudio.model import load
from onnxstudio.runner.compare import compare, parse_config
from onnxstudio.runner.intermediates import capture
from onnxstudio.runner.pipeline import Pipeline, RunRequest
from onnxstudio.runner.profile import profile
from tests.conftest import REPO

MODEL = REPO / "resources" / "sample" / "digits_cnn.onnx"
JOBS: dict[str, Callable[[RunRequest], object]] = {
    "run": lambda r: Pipeline().execute(r),
    "profile": lambda r: profile(r, runs=1, warmup=0),
    "capture": lambda r: capture(r),
    "compare": lambda r: compare(r, parse_config("ort:cpu:all"),
                                 parse_config("ort:cpu:disabled")),
}


@pytest.mark.parametrize("job", list(JOBS))
def test_each_job_reads_the_model_file_once(job: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    read_bytes = load.read_bytes

    def counted(path: Path) -> bytes:
        reads.append(path)
        return read_bytes(path)

    monkeypatch.setattr(load, "read_bytes", counted)
    JOBS[job](RunRequest(MODEL, random=True))
    assert reads == [MODEL]
