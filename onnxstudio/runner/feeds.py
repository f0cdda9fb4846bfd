"""The feeds of a run request for a session made outside the pipeline (profiling, capture,
compare), so every inspection tool preprocesses exactly as `onnxstudio run` does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from onnxstudio.errors import InputError
from onnxstudio.runner.pipeline import Pipeline, RunRequest
from onnxstudio.runner.session import Session
from onnxstudio.runner.source import ModelSource


def request_feeds(request: RunRequest, session: Session,
                  source: ModelSource | None = None) -> tuple[str, dict[str, Any]]:
    """(source name, feeds) of the request's first input, prepared against ``session``;
    ``source``: the model ``session`` was made from (its specs then need no reading)."""
    pipeline = Pipeline()
    pipeline.adopt(session, source)
    jobs = pipeline.prepare(replace(request, model=session.path, config=session.config))
    if not jobs:
        raise InputError("nothing to run: give an image, .npy files or random inputs")
    name, feeds, _ = jobs[0]
    return name, feeds
