"""Request in, outcomes out: the one code path shared by the panel's worker, the CLI and the
overhead benchmark (read inputs, preprocess, run, postprocess)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.errors import InputError, RunError
from onnxstudio.runner import images
from onnxstudio.runner.audio import audio_input, read_wav, run_in_windows, shaped
from onnxstudio.runner.detect import (
    DEFAULT_IOU,
    DEFAULT_THRESHOLD,
    Detections,
    Segmentation,
    detect,
    segment,
)
from onnxstudio.runner.evidence import Evidence, gather, image_to_image
from onnxstudio.runner.fed import FedTensor, fed_tensors
from onnxstudio.runner.inputs import (
    ModelInfo,
    TensorSpec,
    load_npy,
    read_model_info,
)
from onnxstudio.runner.labels import Labels, resolve_labels
from onnxstudio.runner.output_kinds import hints
from onnxstudio.runner.postprocess import OutputView, interpret
from onnxstudio.runner.preprocess import (
    Preprocessed,
    PreprocessOptions,
    PreprocessPlan,
    image_input,
    plan,
)
from onnxstudio.runner.preprocess import apply as apply_plan
from onnxstudio.runner.session import BenchmarkResult, RunCancelled, Session, SessionConfig
from onnxstudio.runner.session_host import HostedSession, SessionHosts, hosted
from onnxstudio.runner.source import ModelSource
from onnxstudio.runner.synthetic import (
    AUDIO_SAMPLES,
    default_dim_sizes,
    dim_key,
    dims_note,
    synthetic_feeds,
)
from onnxstudio.runner.testdata import TestSet, Verdict, load_test_data, verdict

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
    """What the user asked for: images, else audio, else .npy files, else random inputs
    (the inputs a clip or .npy file does not cover get synthetic data).

    The window passes the path, and an edited tab its bytes, but never a parsed proto: a
    tab keeps its `Model` (names, types, weight sizes, not the weight bytes), and holding
    every open model's proto would keep all its weights in memory while the tab is open.
    The worker parses the file once per job instead (`read`), off the GUI thread.
    """

    model: Path
    images: list[ImageSource] = field(default_factory=list)
    npy: dict[str, Path] = field(default_factory=dict)  # input name -> .npy file
    audio: Path | None = None  # a .wav file for the audio-shaped input
    testdata: Path | None = None  # a test set folder, a folder of sets, a .pb or an .npz
    random: bool = False
    zeros: bool = False  # with random: all-zero data instead
    dim_sizes: dict[str, int] = field(default_factory=dict)
    options: PreprocessOptions = field(default_factory=PreprocessOptions)
    config: SessionConfig = field(default_factory=SessionConfig)
    top_k: int = 5
    labels_file: Path | None = None
    benchmark_runs: int = 0
    threshold: float | None = None  # detectors: the lowest score shown (None: the family's)
    presets: tuple[str, ...] = ()  # run the first image under each, side by side
    iou: float = DEFAULT_IOU  # detectors: NMS overlap
    # An edited, unsaved copy of ``model`` to run instead (external data still resolves
    # next to ``model``); the same bytes object keeps its session between runs.
    model_bytes: bytes | None = None

    def read(self) -> ModelSource:
        """The model the request runs, parsed once: the edited copy if any, else the file."""
        return ModelSource.read(self.model, self.model_bytes)


@dataclass
class RunOutcome:
    source: str
    fed: list[FedTensor]
    views: list[OutputView]
    latency_ms: float
    preprocessed: Preprocessed | None = None
    benchmark: BenchmarkResult | None = None
    detections: Detections | None = None
    segmentation: Segmentation | None = None
    check: Verdict | None = None  # a test set's expected outputs against these

    def classification(self) -> OutputView | None:
        return next((v for v in self.views if v.top), None)

    def top1(self) -> tuple[str, float] | None:
        """(label, score) of the best class, or of the best detection."""
        cls = self.classification()
        if cls is not None and cls.top:
            return cls.top[0].label, cls.top[0].score
        best = self.detections.above() if self.detections else []
        return (best[0].label, best[0].score) if best else None

    def as_json(self, model: Path) -> dict[str, object]:
        """The `onnxstudio run --json` object for one input."""
        cls = self.classification()
        pre = self.preprocessed.plan.as_json() if self.preprocessed else None
        data: dict[str, object] = {
            "input": self.source, "model": str(model), "preprocess": pre,
            "outputs": [v.as_json() for v in self.views],
            "top": [{"index": t.index, "label": t.label, "score": t.score}
                    for t in cls.top] if cls else [],
            "latency_ms": self.latency_ms}
        if self.preprocessed is not None:
            data["reasons"] = list(self.preprocessed.plan.reasons)
        if self.detections is not None:
            data["detector"] = self.detections.description
            data["threshold"] = self.detections.threshold
            data["detections"] = [d.as_json() for d in self.detections.above()]
        if self.check is not None:
            data.update(self.check.as_json())
        if self.segmentation is not None:
            data["segmentation"] = [{"label": lab, "index": i, "fraction": round(f, 6)}
                                    for i, lab, f in self.segmentation.areas]
        return data


class Pipeline:
    """Holds the long-lived session for one model and runs requests against it."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.hosts = SessionHosts()  # big models' sessions, each in its own process
        self.info: ModelInfo | None = None
        self._evidence: Evidence | None = None
        self._bytes: bytes | None = None  # the edited copy the session runs, if any
        self._expected: dict[str, TestSet] = {}  # job name -> the test set it runs

    def ensure_session(self, model: Path, config: SessionConfig,
                       progress: Progress | None = None,
                       model_bytes: bytes | None = None) -> Session:
        s = self.session
        if (s is not None and s.path == Path(model) and s.config == config
                and self._bytes is model_bytes
                and (not isinstance(s, HostedSession) or s.host.alive())):
            return s
        self.session = None
        self._evidence = None
        if progress:
            progress(f"Creating onnxruntime session for {Path(model).name}…", 0, 0)
        if hosted(Path(model), model_bytes):  # read, created and run in a child process
            hosted_session = self.hosts.session(Path(model), config, model_bytes)
            self.info, self.session = hosted_session.info, hosted_session
        else:
            source = ModelSource.read(model, model_bytes)  # one parse for specs and session
            self.info = source.info()
            self.session = source.session(config)
        self._bytes = model_bytes
        return self.session

    def cancel(self) -> None:
        if self.session is not None:
            self.session.cancel()
        self.hosts.cancel()  # a host still creating its session

    def image_spec(self) -> TensorSpec:
        assert self.info is not None and self.session is not None
        spec = image_input(self.info.inputs) or image_input(self.session.inputs)
        if spec is None:
            names = ", ".join(s.describe() for s in self.session.inputs)
            raise InputError(f"{self.info.path.name}: no input takes an image ({names}); "
                             "use .npy files or random inputs")
        return spec

    def evidence(self) -> Evidence:
        """What the model file says about its preprocessing and outputs (computed once)."""
        assert self.info is not None and self.session is not None
        if self._evidence is None:
            spec = image_input(self.info.inputs) or image_input(self.session.inputs)
            self._evidence = gather(self.info, spec,
                                    image_to_image=image_to_image(self.info.outputs))
        return self._evidence

    def plan_for(self, options: PreprocessOptions) -> PreprocessPlan:
        assert self.info is not None and self.session is not None
        return plan(self.image_spec(), self.info.metadata or self.session.metadata, options,
                    image_to_image=image_to_image(self.info.outputs), evidence=self.evidence())

    def labels_for(self, request: RunRequest) -> Callable[[int], Labels | None]:
        info = self.info

        def find(n: int) -> Labels | None:
            return resolve_labels(n, request.model, info.metadata if info else None,
                                  info.class_labels if info else None, request.labels_file)
        return find

    def adopt(self, session: Session, source: ModelSource | None = None) -> None:
        """Prepare feeds for a session made elsewhere (profiling, extra outputs);
        ``source``: what it was made from (else the file is read for its specs)."""
        self.session = session
        self._bytes = source.edited if source is not None else None
        self.info = source.info() if source is not None else read_model_info(session.path)
        self._evidence = None

    def prepare(self, request: RunRequest, progress: Progress | None = None) -> list[Job]:
        """The request's feeds, one job per input source, without running anything."""
        session = self.ensure_session(request.model, request.config, progress,
                                      request.model_bytes)
        assert self.info is not None
        if request.testdata is not None:
            return self._test_jobs(request)
        if request.images:
            return self._image_jobs(request)
        if request.audio is not None:
            return [self._audio_job(request)]
        if request.npy:
            return [self._npy_job(request)]
        if request.random:
            specs = self.info.inputs or session.inputs
            feeds = synthetic_feeds(specs, request.dim_sizes, zeros=request.zeros,
                                    hints=self.info.dim_hints)
            return [("zero inputs" if request.zeros else "random inputs", feeds, None)]
        raise InputError("nothing to run: give an image, a .wav or .npy file, or random inputs")

    def _specs(self) -> list[TensorSpec]:
        assert self.info is not None and self.session is not None
        return self.info.inputs or self.session.inputs

    def _image_jobs(self, request: RunRequest) -> list[Job]:
        the_plan = self.plan_for(request.options)
        others = [s for s in self._specs() if s.name != the_plan.input_name]
        extra = {s.name: load_npy(request.npy[s.name], s) for s in others
                 if s.name in request.npy}
        missing = [s.name for s in others if s.name not in extra]
        if missing:
            raise InputError(f"{request.model.name}: inputs {', '.join(missing)} need "
                             ".npy files besides the image")
        jobs: list[Job] = []
        for src in request.images:
            pre = apply_plan(the_plan, src.load())
            jobs.append((src.name, {the_plan.input_name: pre.tensor, **extra}, pre))
        return jobs

    def _complete(self, request: RunRequest, given: dict[str, np.ndarray],
                  extra_values: dict[str, float] | None = None) -> dict[str, Any]:
        """The given arrays plus synthetic data for the other inputs, sized to agree with
        the given arrays' symbolic dimensions."""
        specs = self._specs()
        sizes = dict(request.dim_sizes)
        for spec in specs:
            if spec.name in given:
                for axis, d in enumerate(spec.shape):
                    key = dim_key(spec, axis, d)
                    if key is not None and axis < np.ndim(given[spec.name]):
                        sizes.setdefault(key, int(np.shape(given[spec.name])[axis]))
        rest = [s for s in specs if s.name not in given]
        hints = self.info.dim_hints if self.info is not None else None
        feeds = synthetic_feeds(rest, {k: v for k, v in sizes.items()
                                       if k in default_dim_sizes(rest)}, zeros=request.zeros,
                                hints=hints)
        for name, value in (extra_values or {}).items():
            if name in feeds:
                feeds[name] = np.full_like(feeds[name], value)
        return {s.name: given[s.name] if s.name in given else feeds[s.name] for s in specs}

    def _test_jobs(self, request: RunRequest) -> list[Job]:
        """One job per test set; a lone .pb or an archive may leave inputs to synthesise."""
        assert request.testdata is not None and self.info is not None
        sets = load_test_data(request.testdata, self._specs(), self.info.outputs)
        self._expected = {t.name: t for t in sets}
        return [(t.name, self._complete(request, t.inputs) if t.partial else t.inputs, None)
                for t in sets]

    def _audio_job(self, request: RunRequest) -> Job:
        assert request.audio is not None
        spec = audio_input(self._specs())
        if spec is None:
            names = ", ".join(s.describe() for s in self._specs())
            raise InputError(f"{request.model.name}: no input takes audio ({names})")
        clip = read_wav(request.audio)
        rates = {s.name: float(clip.rate) for s in self._specs()
                 if s.name.lower() in ("sr", "sample_rate", "sampling_rate")}
        feeds = self._complete(request, {spec.name: shaped(clip, spec)}, rates)
        return (request.audio.name, feeds, None)

    def _npy_job(self, request: RunRequest) -> Job:
        npy = dict(request.npy)
        specs = self._specs()
        if "" in npy:  # a bare file: the only input, or the audio-shaped one
            target = specs[0] if len(specs) == 1 else audio_input(specs)
            if target is None:
                names = ", ".join(s.name for s in specs)
                raise InputError(f"{request.model.name} has {len(specs)} inputs ({names}); "
                                 "name each .npy after its input (NAME=FILE.npy)")
            npy = {target.name: npy.pop("")}
        unknown = sorted(set(npy) - {s.name for s in specs})
        if unknown:
            raise InputError(f"{request.model.name}: no input named {', '.join(unknown)}")
        given = {s.name: load_npy(npy[s.name], s) for s in specs if s.name in npy}
        return (", ".join(p.name for p in npy.values()), self._complete(request, given), None)

    def execute(self, request: RunRequest, progress: Progress | None = None) -> list[RunOutcome]:
        """Run the request; raises InputError / RunError (RunCancelled when cancelled)."""
        if request.presets:
            tried = self.try_presets(replace(request, presets=()), list(request.presets))
            for name, outcome in tried:
                outcome.source = f"{name}: {outcome.source}"
            return [o for _, o in tried]
        jobs = self.prepare(request, progress)
        session = self.session
        assert session is not None
        session.reset_cancel()
        outcomes: list[RunOutcome] = []
        for i, (name, feeds, fed_image) in enumerate(jobs):
            if progress:
                progress(f"Running {name}…", i, len(jobs))
            test = self._expected.get(name) if request.testdata is not None else None
            try:
                result = session.run(feeds)
            except RunCancelled:
                raise
            except RunError as exc:
                if test is not None and len(jobs) > 1:  # one row of a table of sets
                    outcomes.append(RunOutcome(name, fed_tensors(feeds), [], 0.0,
                                               check=Verdict(name, error=str(exc))))
                    continue
                if request.random:
                    raise self.with_dims(request, exc) from exc
                if request.audio is None:
                    raise
                outcomes.append(self._windowed(request, name, feeds))  # a streaming model
                continue
            bench = None
            if request.benchmark_runs > 0:
                def tick(done: int, total: int, name: str = name) -> None:
                    if progress:
                        progress(f"Benchmark {name}: {done}/{total}", done, total)
                bench = session.benchmark(feeds, request.benchmark_runs, warmup=0,
                                          progress=tick)
            outcome = self.explain(request, name, feeds, result.outputs, result.latency_ms,
                                   fed_image, bench)
            if test is not None:
                outcome.check = verdict(test, result.outputs)
            outcomes.append(outcome)
        return outcomes

    def with_dims(self, request: RunRequest, exc: RunError) -> RunError:
        """A random run's failure, naming the sizes it gave each symbolic dimension."""
        note = dims_note(self._specs(), request.dim_sizes,
                         self.info.dim_hints if self.info is not None else None)
        return RunError(f"{exc} ({note})" if note else str(exc))

    def _windowed(self, request: RunRequest, name: str, feeds: dict[str, Any]) -> RunOutcome:
        """A clip the model refused whole, fed as the short windows a streaming model takes
        (512 samples at 16 kHz, 256 at 8 kHz), its recurrent state carried along."""
        spec = audio_input(self._specs())
        session = self.session
        assert spec is not None and session is not None
        rate = next((float(np.asarray(v).reshape(-1)[0]) for k, v in feeds.items()
                     if k.lower() in ("sr", "sample_rate", "sampling_rate")), 16000.0)
        window = AUDIO_SAMPLES if rate >= 16000 else AUDIO_SAMPLES // 2
        if feeds[spec.name].shape[-1] < 2 * window:
            raise RunError(f"{request.model.name}: the model refused the clip "
                           f"({feeds[spec.name].shape[-1]} samples)")

        def run(f: dict[str, Any]) -> tuple[dict[str, Any], float]:
            r = session.run(f)
            return r.outputs, r.latency_ms

        outputs, ms, count, padded = run_in_windows(run, feeds, spec.name, window)
        last = f" (the last padded with {padded} zeros)" if padded else ""
        source = f"{name} — {count} windows of {window} samples{last}, state carried"
        outcome = self.explain(request, source, feeds, outputs, ms, None)
        for view in outcome.views:  # one value per window: a time series, not classes
            if view.kind == "classification":
                view.kind, view.top, view.softmax_applied = "tensor", [], False
                view.kind_reason = "one value per window: a time series"
            view.summary = f"{view.summary}, one row per {window}-sample window"
            value = outputs[view.name]
            if value.size == count and value.dtype.kind == "f":
                view.series, view.series_step_s = value.reshape(-1).tolist(), window / rate
        return outcome

    def try_presets(self, request: RunRequest, presets: list[str] | None = None
                    ) -> list[tuple[str, RunOutcome]]:
        """The first image under each preset (default: the evidence's alternatives), so
        the user can compare their top-1 side by side when the evidence is weak."""
        self.ensure_session(request.model, request.config)
        names = presets or list(self.evidence().alternatives)
        results = []
        for name in names:
            options = replace(request.options, preset=name, source="tried side by side")
            one = replace(request, images=request.images[:1], options=options,
                          benchmark_runs=0)
            results.append((name, self.execute(one)[0]))
        return results

    def explain(self, request: RunRequest, name: str, feeds: dict[str, Any],
                outputs: dict[str, Any], latency_ms: float, fed_image: Preprocessed | None,
                bench: BenchmarkResult | None = None) -> RunOutcome:
        """Outputs -> views, and for a detector or segmenter fed an image, what it found."""
        assert self.info is not None
        labels = self.labels_for(request)
        views = interpret(outputs, labels, fed_image, request.top_k, hints(self.info))
        outcome = RunOutcome(name, fed_tensors(feeds), views, latency_ms, fed_image, bench)
        fmt = self.evidence().detector_format if fed_image is not None else ""
        if fed_image is None or not fmt:
            return outcome
        kind = "mask" if fmt.startswith("seg") else "detections"
        for view in views:  # the detector format named these outputs already
            if view.kind not in ("sequence", "map", "string"):
                view.kind, view.image = kind, None
                view.kind_reason = f"{self.evidence().reason} ({fmt} outputs)"
        if fmt.startswith("seg"):
            outcome.segmentation = segment(fmt, outputs, fed_image, labels)
        else:
            threshold = request.threshold if request.threshold is not None else \
                self.evidence().threshold or DEFAULT_THRESHOLD
            outcome.detections = detect(fmt, outputs, fed_image, labels, threshold,
                                        request.iou)
        return outcome
