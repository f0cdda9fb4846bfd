"""The run dock: drop an image (or paste, pick, .npy, random), see the model's answer.

All work happens on the runner's worker thread (`onnxstudio.runner.qt_worker`); this widget
only gathers choices, remembers them (per model for preprocessing, globally for the session)
and displays outcomes. It never imports onnxruntime. Its parts: the inputs (`run_inputs`),
the choices (`run_choices`), the progress line (`run_controls`) and the answer
(`run_results`); the panel turns what the user gives into requests and routes what comes
back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from onnxstudio.runner.folder import FolderItem, collect
from onnxstudio.runner.images import IMAGE_SUFFIXES
from onnxstudio.runner.pipeline import ImageSource, RunOutcome, RunRequest
from onnxstudio.runner.preprocess import PreprocessOptions
from onnxstudio.runner.qt_worker import FolderRequest, FolderRow, RunController, SessionConfig
from onnxstudio.ui.insight.run_choices import RunChoices
from onnxstudio.ui.insight.run_controls import RunControls
from onnxstudio.ui.insight.run_inputs import (
    DroppedFiles,
    RunInputs,
    accepts,
    image_source,
    local_files,
    model_specs,
)
from onnxstudio.ui.insight.run_results import RunResults
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.scrolled import VerticalScroll

ANSWER_SETTLE_MS = 500


KEPT_RUNS = 8  # models whose last run is kept while their tab is not current


@dataclass(frozen=True)
class KeptRun:
    """A model's last run while another model is shown: the request and its answer."""

    request: RunRequest
    outcomes: list[RunOutcome]
    model_bytes: bytes | None


class RunPanel(QWidget):
    """Dock content. Wire it with `set_model(path)` and route dropped images to `open_images`."""

    runFinished = Signal(object)  # list[RunOutcome]
    folderFinished = Signal(object)  # list[FolderRow] (also after a cancel or failure)
    runFailed = Signal(str)
    compareRequested = Signal()  # a failing test set's Compare: its inputs are the last run
    statusMessage = Signal(str)

    def __init__(self, parent: QWidget | None = None,
                 controller: RunController | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunPanel")
        self.setAcceptDrops(True)
        self.controller = controller or RunController(self)
        self._model: Path | None = None
        self._model_bytes: bytes | None = None  # an edited copy that runs instead
        self._last: RunRequest | None = None
        # Each model's last run, kept while another tab is current: switching back shows
        # it again, and Profile, Compare and a clicked edge use its input, not random ones.
        self._kept: dict[Path, KeptRun] = {}
        self._build()
        self._connect()
        self._update_enabled()

    # ----------------------------------------------------------------- public API
    def set_model(self, path: str | Path | None, model: Any = None,
                  model_bytes: bytes | None = None) -> None:
        """Show this model's remembered choices; its session is created on the first run.

        ``model_bytes``: the model as edited (unsaved), which runs instead of the file.
        """
        if self.controller.busy:
            self.controller.cancel()
        self._keep_run()
        self._model = Path(path) if path else None
        self._model_bytes = model_bytes
        edited = " (as edited)" if model_bytes is not None else ""
        self.model_label.setText(f"{self._model.name}{edited}" if self._model
                                 else "No model open")
        self.model_label.setToolTip(str(self._model or ""))
        specs = model_specs(self._model, model) if self._model else []
        self._clear_results()
        self.hide_error()
        self.choices.set_model(self._model, specs)
        self.inputs.set_model_inputs(specs)
        self._restore_run()
        self._update_enabled()

    def _keep_run(self) -> None:
        outcomes = self.results.outcomes()
        if self._model is None or self._last is None or not outcomes \
                or self.results.folder_view.isVisible():
            return
        self._kept.pop(self._model, None)
        self._kept[self._model] = KeptRun(self._last, outcomes, self._model_bytes)
        while len(self._kept) > KEPT_RUNS:  # the oldest go: their outcomes hold tensors
            del self._kept[next(iter(self._kept))]

    def _restore_run(self) -> None:
        kept = self._kept.pop(self._model, None) if self._model is not None else None
        if kept is None or kept.model_bytes is not self._model_bytes:
            return  # never kept, or the model was edited since: that run is not its own
        self._last = kept.request
        self.results.show_outcomes(kept.outcomes)
        self.controls.say("Done (the last run of this model)")

    def model_path(self) -> Path | None:
        return self._model

    def open_images(self, paths: Iterable[str | Path]) -> bool:
        """Run on image files, a folder, a .wav or .npy files, or test data (a
        test_data_set_N folder, a folder of them, .pb, .npz); False (with a message) if none
        could be used. A folder or several images fill the folder table."""
        files = DroppedFiles.sort(paths)
        if not self._require_model():
            return False
        if files.tests:  # checked against its expected outputs on the worker
            self._submit(RunRequest(self._model, testdata=files.tests[0]))  # type: ignore[arg-type]
            return True
        if files.others:
            self.show_error(f"{files.others[0].name}: not an image, folder, .wav, .npy, .npz "
                            f"or .pb file (supported: {', '.join(IMAGE_SUFFIXES)}, .wav, .npy, "
                            ".npz, .pb, test_data_set folders)")
            if not files.usable():
                return False
        pics, folders = files.pics, files.folders
        if folders or len(pics) > 1:
            items = [i for f in folders for i in collect(f)]
            items += [FolderItem(p, p.name, None) for p in pics]
            return self.run_folder(items, folders[0].name if folders else f"{len(pics)} files")
        if pics:  # decoded on the worker thread: a bad file comes back as a message
            sources = [ImageSource(p.name, p) for p in pics]
            self._submit(RunRequest(self._model, images=sources))  # type: ignore[arg-type]
            return True
        if files.wavs:
            self._submit(RunRequest(self._model, audio=files.wavs[0]))  # type: ignore[arg-type]
            return True
        if files.npys:
            return self.open_npy(files.npys)
        return False

    def run_folder(self, items: list[FolderItem], where: str) -> bool:
        """Every image through the model, the table filling as they finish."""
        if not items:
            self.show_error(f"{where}: no images found (supported: {', '.join(IMAGE_SUFFIXES)})")
            return False
        request = RunRequest(self._model)  # type: ignore[arg-type]
        self._fill_request(request)
        self._clear_results()
        self.results.folder_view.start(len(items), where)
        self.hide_error()
        self._show_answer()
        self.controller.submit(FolderRequest(request, items))
        return True

    def try_presets(self) -> bool:
        """The last image under each likely preset, top-1 side by side."""
        last = self._last
        shown = self.results.outcomes()[:1]
        pre = shown[0].preprocessed if shown else None
        if last is None or not last.images or pre is None or not pre.plan.alternatives:
            return False
        self._submit(replace(last, images=last.images[:1], presets=pre.plan.alternatives),
                     remember=False)
        return True

    def open_npy(self, paths: Sequence[str | Path]) -> bool:
        """.npy inputs: one file feeds the only input; several are matched by file stem."""
        if not self._require_model():
            return False
        files = [Path(p) for p in paths]
        if len(files) == 1:
            self._submit(RunRequest(self._model, npy={"": files[0]}))  # type: ignore[arg-type]
        else:
            self._submit(RunRequest(self._model,  # type: ignore[arg-type]
                                    npy={p.stem: p for p in files}))
        return True

    def paste_image(self) -> bool:
        """Run on the clipboard's image (or the image files it holds)."""
        clip = QGuiApplication.clipboard()
        local = local_files(clip.mimeData())
        if local:
            return self.open_images(local)
        img = clip.image()
        if img.isNull():
            self.show_error("The clipboard holds no image")
            return False
        if not self._require_model():
            return False
        self._submit(RunRequest(self._model,  # type: ignore[arg-type]
                                images=[image_source(img, "clipboard image")]))
        return True

    def run_random(self, zeros: bool = False) -> bool:
        if not self._require_model():
            return False
        try:
            sizes = self.choices.dim_sizes()
        except ValueError as exc:
            self.show_error(str(exc))
            return False
        self._submit(RunRequest(self._model, random=True,  # type: ignore[arg-type]
                                dim_sizes=sizes, zeros=zeros))
        return True

    def benchmark(self, runs: int | None = None) -> bool:
        """Repeat the last input N times; shows median and p90."""
        if self._last is None:
            self.show_error("Run the model once first, then benchmark that input")
            return False
        n = runs or self.controls.bench_runs.value()
        self._submit(replace(self._last, benchmark_runs=n, presets=()), remember=False)
        return True

    def open_image_dialog(self) -> None:
        self.inputs.open_image_dialog()

    def cancel(self) -> None:
        self.controller.cancel()

    def shutdown(self) -> None:
        """Stop the worker thread; call when the window closes."""
        self.controller.shutdown()

    def model_closed(self, path: Path) -> None:
        """The last tab of ``path`` closed: the process hosting its session ends."""
        self.controller.release(path)

    def outcomes(self) -> list[RunOutcome]:
        return self.results.outcomes()

    def has_run(self) -> bool:
        """Whether there is a finished run whose input the inspection tools can reuse."""
        return self._last is not None and bool(self.results.outcomes())

    def options(self) -> PreprocessOptions:
        return self.choices.options()

    def session_config(self) -> SessionConfig:
        return self.choices.session_config()

    def inspection_request(self) -> RunRequest:
        """The last input (random inputs when there was none) with the current choices:
        what Profile, tensor capture and Compare feed, so they see what the user ran.

        Raises ValueError for unusable Dims text and when no model is open.
        """
        if self._model is None:
            raise ValueError("Open a model first")
        last = self._last
        if last is None or last.model != self._model:
            last = RunRequest(self._model, random=True, dim_sizes=self.choices.dim_sizes())
        return replace(last, options=self.options(), config=self.session_config(),
                       top_k=self.choices.top_k(), labels_file=self.choices.labels_file(),
                       benchmark_runs=0)

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        # A dock is narrow: content wraps to its width rather than scrolling sideways,
        # and the dock is never narrower than its controls.
        self.scroll_area = scroll = VerticalScroll(self)
        self._answer: QWidget | None = None  # kept in view while it settles
        scroll.verticalScrollBar().rangeChanged.connect(self._keep_answer_in_view)
        outer.addWidget(scroll)
        body = QWidget()
        scroll.setWidget(body)
        lay = QVBoxLayout(body)
        self.model_label = QLabel("No model open")
        self.model_label.setStyleSheet("font-weight: bold")
        lay.addWidget(self.model_label)
        self.error_banner = ErrorBanner()
        lay.addWidget(self.error_banner)
        self.inputs = RunInputs()
        lay.addWidget(self.inputs)
        self.choices = RunChoices()
        lay.addWidget(self.choices)
        self.controls = RunControls()
        lay.addWidget(self.controls)
        self.results = RunResults()
        lay.addWidget(self.results, 1)

    def _connect(self) -> None:
        inputs, results = self.inputs, self.results
        inputs.filesChosen.connect(self.open_images)
        inputs.npyChosen.connect(self.open_npy)
        inputs.paste_button.clicked.connect(self.paste_image)
        inputs.random_button.clicked.connect(lambda: self.run_random())
        inputs.zeros_button.clicked.connect(lambda: self.run_random(zeros=True))
        results.presets_button.clicked.connect(self.try_presets)
        results.presetChosen.connect(self._use_preset)
        results.verdict_view.compareRequested.connect(self._compare_set)
        results.folder_view.rowActivated.connect(lambda row: self.open_images([row.item.path]))
        self.controls.cancel_button.clicked.connect(self.cancel)
        self.controls.bench_button.clicked.connect(lambda: self.benchmark())
        c = self.controller
        c.started.connect(lambda: self.controls.say("Running…"))
        c.progress.connect(self.controls.show_progress)
        c.row.connect(results.folder_view.add_row)
        c.finished.connect(self._on_finished)
        c.failed.connect(self._on_failed)
        c.cancelled.connect(self._on_cancelled)
        c.busyChanged.connect(lambda _busy: self._update_enabled())

    def _compare_set(self, name: str) -> None:
        """Compare one set of a table (or the one set run): its inputs become the last
        input, which Compare feeds."""
        last = self._last
        if last is None or last.testdata is None:
            return
        if last.testdata.name != name and (last.testdata / name).is_dir():
            self._last = replace(last, testdata=last.testdata / name)
        self.compareRequested.emit()

    def _use_preset(self, name: str) -> None:
        self.choices.use_preset(name)
        self.controls.say(f"Preset {name} chosen for this model (remembered)")

    # ----------------------------------------------------------------- requests
    def _require_model(self) -> bool:
        if self._model is None:
            self.show_error("Open a model first, then drop an image on it")
            return False
        return True

    def _fill_request(self, request: RunRequest) -> None:
        request.options = self.options()
        request.config = self.session_config()
        request.top_k = self.choices.top_k()
        request.labels_file = self.choices.labels_file()
        detection = self.results.detection_view
        if detection.isVisible():  # the user's threshold, once they have seen one
            request.threshold = detection.threshold()
        request.model_bytes = self._model_bytes

    def _submit(self, request: RunRequest, remember: bool = True) -> None:
        self._fill_request(request)
        if remember:
            self._last = request
        self.hide_error()
        self.controller.submit(request)

    # ----------------------------------------------------------------- drops
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if accepts(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        mime = event.mimeData()
        local = local_files(mime)
        if local:
            self.open_images(local)
            event.acceptProposedAction()
        elif mime.hasImage() and self._require_model():
            img = QImage(mime.imageData())
            self._submit(RunRequest(self._model,  # type: ignore[arg-type]
                                    images=[image_source(img, "dropped image")]))
            event.acceptProposedAction()

    # ----------------------------------------------------------------- results
    def show_error(self, message: str) -> None:
        """Non-modal: a banner at the top of the panel; everything stays usable."""
        self.error_banner.show_message(message)
        self.statusMessage.emit(message)

    def hide_error(self) -> None:
        self.error_banner.hide()

    def error_text(self) -> str:
        return self.error_banner.message()

    def _update_enabled(self) -> None:
        has_model = self._model is not None
        self.inputs.set_usable(has_model)
        self.results.presets_button.setEnabled(has_model)
        self.controls.set_state(self.controller.busy, has_model)

    def _on_failed(self, message: str) -> None:
        """A failed run leaves no earlier answer on screen to be mistaken for this one."""
        folder_view = self.results.folder_view
        folder = folder_view.isVisible()
        self._clear_results(keep_last=True)
        if folder:
            folder_view.show()
            folder_view.finish(cancelled=True)
        self.controls.say("Failed")
        self.show_error(message)
        self.runFailed.emit(message)

    def _on_cancelled(self) -> None:
        self.controls.say("Cancelled")
        folder_view = self.results.folder_view
        if folder_view.isVisible():
            folder_view.finish(cancelled=True)
            self.folderFinished.emit(folder_view.rows())

    def _on_finished(self, outcomes: list[Any]) -> None:
        folder_view = self.results.folder_view
        if folder_view.isVisible() and (not outcomes or isinstance(outcomes[0], FolderRow)):
            folder_view.finish()
            self.controls.say("Done")
            self.folderFinished.emit(folder_view.rows())
            return
        self.results.show_outcomes(outcomes)
        self.controls.say("Done")
        self._show_answer()
        self.runFinished.emit(outcomes)

    def _show_answer(self) -> None:
        """Scroll the answer into view: below the choices it starts under the fold of a
        1280x800 window, and a dropped photo's top-k must show at once. Its rows settle
        their heights over the next turns (the scroll range grows): for a moment, each
        growth scrolls again."""
        self._answer = self.results.answer()
        QTimer.singleShot(0, self, self._keep_answer_in_view)
        QTimer.singleShot(ANSWER_SETTLE_MS, self, self._settled)

    def _settled(self) -> None:
        self._answer = None

    def _keep_answer_in_view(self) -> None:
        if self._answer is not None:
            self.scroll_area.ensureWidgetVisible(self._answer, 0, 8)

    def _clear_results(self, keep_last: bool = False) -> None:
        if not keep_last:
            self._last = None
        self.results.clear()
        self.controls.say("Ready" if self._model else "Open a model to run it")
