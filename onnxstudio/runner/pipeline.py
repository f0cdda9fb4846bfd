"""Request in, outcomes out: the one code path shared by the panel's worker, the CLI and the
overhead benchmark (read inputs, preprocess, run, postprocess)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.errors import InputError
from onnxstudio.runner import images
from onnxstudio.runner.inputs import (
    ModelInfo,
    TensorSpec,
    load_npy,
    random_feeds,
    read_model_info,
)
from onnxstudio.runner.labels import Labels, resolve_labels
from onnxstudio.runner.postprocess import OutputView, interpret
from onnxstudio.runner.preprocess import (
    Preprocessed,
    PreprocessOptions,
    PreprocessPlan,
    image_input,
    plan,
)
from onnxstudio.runner.preprocess import apply as apply_plan
from onnxstudio.runner.session import BenchmarkResult, Session, SessionConfig

Progress = Callable[[str, int, int], None]  # message, done, total
Job = tuple[str, dict[str, Any], Preprocessed | None]  # source name, feeds, preprocessing


@dataclass
class ImageSource:
    """An image to feed: a file, or pixels already decoded (e.g. pasted from the clipboard)."""

    name: str
    path: Path | None = None
    rgb: np.ndarray | None = None

    def load(self) -> np.ndarray:
        if self.rgb is not None:
            return self.rgb
        assert self.path is not None
        return images.load_image(self.path)


@dataclass
class RunRequest:
    """What the user asked for. Exactly one of images / npy / random is used."""

    model: Path
    images: list[ImageSource] = field(default_factory=list)
    npy: dict[str, Path] = field(default_factory=dict)  # input name -> .npy file
    random: bool = False
    dim_sizes: dict[str, int] = field(default_factory=dict)
    options: PreprocessOptions = field(default_factory=PreprocessOptions)
    config: SessionConfig = field(default_factory=SessionConfig)
    top_k: int = 5
    labels_file: Path | None = None
    benchmark_runs: int = 0


@dataclass
class FedTensor:
    name: str
    dtype: str
    shape: list[int]
    low: float
    high: float

    def describe(self) -> str:
        return f"{self.name}: {self.dtype}{self.shape} range [{self.low:.4g}, {self.high:.4g}]"


@dataclass
class RunOutcome:
    source: str
    fed: list[FedTensor]
    views: list[OutputView]
    latency_ms: float
    preprocessed: Preprocessed | None = None
    benchmark: BenchmarkResult | None = None

    def classification(self) -> OutputView | None:
        return next((v for v in self.views if v.top), None)

    def as_json(self, model: Path) -> dict[str, object]:
        """The `onnxstudio run --json` object for one input."""
        cls = self.classification()
        pre = self.preprocessed.plan.as_json() if self.preprocessed else None
        return {"input": self.source, "model": str(model), "preprocess": pre,
                "outputs": [v.as_json() for v in self.views],
                "top": [{"index": t.index, "label": t.label, "score": t.score}
                        for t in cls.top] if cls else [],
                "latency_ms": self.latency_ms}


def _fed(feeds: dict[str, Any]) -> list[FedTensor]:
    out = []
    for name, arr in feeds.items():
        numeric = arr.size and arr.dtype.kind in "fiub"
        lo = float(arr.min()) if numeric else 0.0
        hi = float(arr.max()) if numeric else 0.0
        out.append(FedTensor(name, str(arr.dtype), [int(d) for d in arr.shape], lo, hi))
    return out


def image_to_image(outputs: list[TensorSpec]) -> bool:
    """An output shaped like an image (1 or 3 channels, spatial dims not 1): style transfer,
    super-resolution, ... these take 0-255 (colour) or 0-1 (grey) pixels by default."""
    for o in outputs:
        if o.is_tensor and len(o.shape) == 4:
            c1, c3 = o.shape[1], o.shape[3]
            if c1 in (1, 3) and all(d != 1 for d in o.shape[2:]):
                return True
            if c3 in (1, 3) and all(d != 1 for d in o.shape[1:3]) and c1 not in (1, 3):
                return True
    return False


class Pipeline:
    """Holds the long-lived session for one model and runs requests against it."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.info: ModelInfo | None = None

    def ensure_session(self, model: Path, config: SessionConfig,
                       progress: Progress | None = None) -> Session:
        s = self.session
        if s is not None and s.path == Path(model) and s.config == config:
            return s
        self.session = None
        if progress:
            progress(f"Creating onnxruntime session for {Path(model).name}…", 0, 0)
        self.info = read_model_info(model)
        self.session = Session(model, config)
        return self.session

    def cancel(self) -> None:
        if self.session is not None:
            self.session.cancel()

    def image_spec(self) -> TensorSpec:
        assert self.info is not None and self.session is not None
        spec = image_input(self.info.inputs) or image_input(self.session.inputs)
        if spec is None:
            names = ", ".join(s.describe() for s in self.session.inputs)
            raise InputError(f"{self.info.path.name}: no input takes an image ({names}); "
                             "use .npy files or random inputs")
        return spec

    def plan_for(self, options: PreprocessOptions) -> PreprocessPlan:
        assert self.info is not None and self.session is not None
        return plan(self.image_spec(), self.info.metadata or self.session.metadata, options,
                    image_to_image=image_to_image(self.info.outputs))

    def labels_for(self, request: RunRequest) -> Callable[[int], Labels | None]:
        info = self.info

        def find(n: int) -> Labels | None:
            return resolve_labels(n, request.model, info.metadata if info else None,
                                  info.class_labels if info else None, request.labels_file)
        return find

    def adopt(self, session: Session) -> None:
        """Prepare feeds for a session made elsewhere (profiling, extra outputs)."""
        self.session = session
        self.info = read_model_info(session.path)

    def prepare(self, request: RunRequest, progress: Progress | None = None) -> list[Job]:
        """The request's feeds, one job per input source, without running anything."""
        session = self.ensure_session(request.model, request.config, progress)
        assert self.info is not None
        jobs: list[Job] = []
        if request.images:
            the_plan = self.plan_for(request.options)
            others = [s for s in session.inputs if s.name != the_plan.input_name]
            extra = {s.name: load_npy(request.npy[s.name], s) for s in others
                     if s.name in request.npy}
            missing = [s.name for s in others if s.name not in extra]
            if missing:
                raise InputError(f"{request.model.name}: inputs {', '.join(missing)} need "
                                 ".npy files besides the image")
            for src in request.images:
                pre = apply_plan(the_plan, src.load())
                jobs.append((src.name, {the_plan.input_name: pre.tensor, **extra}, pre))
        elif request.npy:
            npy = dict(request.npy)
            if "" in npy:  # a bare file: the model's only input
                if len(session.inputs) != 1:
                    names = ", ".join(s.name for s in session.inputs)
                    raise InputError(f"{request.model.name} has {len(session.inputs)} inputs "
                                     f"({names}); name each .npy after its input")
                npy = {session.inputs[0].name: npy.pop("")}
            feeds: dict[str, Any] = {}
            for spec in session.inputs:
                if spec.name not in npy:
                    raise InputError(f"{request.model.name}: no .npy file for input "
                                     f"{spec.name!r}")
                feeds[spec.name] = load_npy(npy[spec.name], spec)
            jobs.append((", ".join(p.name for p in npy.values()), feeds, None))
        elif request.random:
            specs = self.info.inputs or session.inputs
            jobs.append(("random inputs", random_feeds(specs, request.dim_sizes), None))
        else:
            raise InputError("nothing to run: give an image, .npy files or random inputs")
        return jobs

    def execute(self, request: RunRequest, progress: Progress | None = None) -> list[RunOutcome]:
        """Run the request; raises InputError / RunError (RunCancelled when cancelled)."""
        jobs = self.prepare(request, progress)
        session = self.session
        assert session is not None
        session.reset_cancel()
        outcomes: list[RunOutcome] = []
        for i, (name, feeds, fed_image) in enumerate(jobs):
            if progress:
                progress(f"Running {name}…", i, len(jobs))
            result = session.run(feeds)
            bench = None
            if request.benchmark_runs > 0:
                def tick(done: int, total: int, name: str = name) -> None:
                    if progress:
                        progress(f"Benchmark {name}: {done}/{total}", done, total)
                bench = session.benchmark(feeds, request.benchmark_runs, warmup=0,
                                          progress=tick)
            views = interpret(result.outputs, self.labels_for(request), fed_image,
                              request.top_k)
            outcomes.append(RunOutcome(name, _fed(feeds), views, result.latency_ms, fed_image,
                                       bench))
        return outcomes
