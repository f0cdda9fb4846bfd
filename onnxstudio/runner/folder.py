"""A folder of images through one model: a row per file as it finishes, and — when the
sub-folder names are class labels — accuracy and a confusion matrix. Shared by the panel's
table and `onnxstudio run MODEL DIR`."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from PIL import Image

from onnxstudio.errors import OnnxStudioError
from onnxstudio.runner.images import is_image_path
from onnxstudio.runner.labels import Labels, wordnet_class
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunOutcome, RunRequest
from onnxstudio.runner.session import RunCancelled

MAX_FILES = 100_000
CSV_COLUMNS = ("file", "truth", "top1", "index", "score", "correct", "latency_ms", "error")


@dataclass(frozen=True)
class FolderItem:
    path: Path
    name: str  # relative to the folder, shown to the user
    truth: str | None  # the sub-folder name, if the file is in one


@dataclass
class FolderRow:
    item: FolderItem
    label: str | None = None
    index: int | None = None
    score: float | None = None
    latency_ms: float | None = None
    error: str = ""
    correct: bool | None = None  # None: no ground truth for this file
    truth_label: str | None = None  # the class the sub-folder names, as the labels spell it
    outcome: RunOutcome | None = None  # only while the caller wants it (overlays)
    thumbnail: np.ndarray | None = None  # small RGB uint8, when asked for

    def as_csv(self) -> list[str]:
        def num(v: float | None, fmt: str) -> str:
            return "" if v is None else format(v, fmt)
        return [self.item.name, self.item.truth or "", self.label or "",
                "" if self.index is None else str(self.index), num(self.score, ".6f"),
                "" if self.correct is None else ("yes" if self.correct else "no"),
                num(self.latency_ms, ".3f"), self.error]


@dataclass
class FolderRequest:
    """A folder run for the worker: the request's options applied to every item."""

    request: RunRequest
    items: list[FolderItem]
    thumbnails: int = 48


@dataclass
class FolderSummary:
    images: int
    errors: int
    accuracy: float | None  # None when the sub-folder names are not class labels
    classes: list[str] = field(default_factory=list)  # confusion rows (truth) and columns
    matrix: list[list[int]] = field(default_factory=list)  # [truth][predicted]
    truths: int = 0  # classes[:truths] occur as truth; the rest only as predictions

    def as_json(self) -> dict[str, object]:
        return {"images": self.images, "errors": self.errors, "accuracy": self.accuracy,
                "confusion": {"classes": self.classes, "matrix": self.matrix,
                              "truth_classes": self.classes[:self.truths],
                              "predicted_only": self.classes[self.truths:]}}


def collect(folder: str | Path) -> list[FolderItem]:
    """Images in the folder and below, sorted; the first sub-folder level names the truth."""
    root = Path(folder)
    items: list[FolderItem] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or not is_image_path(path) or path.name.startswith("."):
            continue
        rel = path.relative_to(root)
        items.append(FolderItem(path, rel.as_posix(), rel.parts[0] if len(rel.parts) > 1
                                else None))
        if len(items) >= MAX_FILES:
            break
    return items


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


def truth_index(truth: str, labels: Labels | None) -> int | None:
    """The class a sub-folder name means: a label (case, '_' and '-' ignored), an ImageNet
    WordNet id (``n02124075``) when the labels are ImageNet's, or an index."""
    if labels is not None:
        wanted = _norm(truth)
        for i, name in enumerate(labels.names):
            if _norm(name) == wanted:
                return i
        found = wordnet_class(truth, labels.names)
        if found is not None:
            return found
    if truth.isdigit() and (labels is None or int(truth) < len(labels.names)):
        return int(truth)
    return None


def _row(item: FolderItem, outcome: RunOutcome, labels: Labels | None) -> FolderRow:
    row = FolderRow(item, latency_ms=outcome.latency_ms)
    cls = outcome.classification()
    if cls is not None and cls.top:
        row.label, row.index, row.score = cls.top[0].label, cls.top[0].index, cls.top[0].score
    elif (best := outcome.top1()) is not None:
        row.label, row.score = best
    if item.truth is not None and row.index is not None:
        want = truth_index(item.truth, labels)
        row.correct = None if want is None else want == row.index
        if want is not None:
            row.truth_label = labels.name(want) if labels is not None else str(want)
    return row


def thumbnail(rgb: np.ndarray, side: int) -> np.ndarray:
    img = Image.fromarray(rgb)
    img.thumbnail((side, side), Image.Resampling.BILINEAR)
    return np.asarray(img.convert("RGB"))


def run_folder(pipeline: Pipeline, request: RunRequest, items: list[FolderItem],
               cancelled: Callable[[], bool] = lambda: False, keep_outcomes: bool = False,
               thumbnails: int = 0) -> Iterator[FolderRow]:
    """One row per image as it finishes; a file that fails gives a row with its error (the
    model failing to load stops the run: every other file would fail the same way)."""
    labels: Labels | None = None
    labels_known = False
    for item in items:
        if cancelled():
            return
        one = replace(request, images=[ImageSource(item.name, item.path)])
        try:
            outcome = pipeline.execute(one)[0]
        except RunCancelled:
            return
        except OnnxStudioError as exc:
            if pipeline.session is None:
                raise
            yield FolderRow(item, error=str(exc))
            continue
        if not labels_known:
            cls = outcome.classification()
            n = 1
            for d in cls.shape if cls else []:
                n *= d
            labels = pipeline.labels_for(request)(n) if cls else None
            labels_known = True
        row = _row(item, outcome, labels)
        pre = outcome.preprocessed
        if thumbnails and pre is not None and pre.original is not None:
            row.thumbnail = thumbnail(pre.original, thumbnails)
        if keep_outcomes:
            row.outcome = outcome
        yield row


def summarise(rows: list[FolderRow]) -> FolderSummary:
    """Counts, and accuracy + confusion matrix over the files whose folder names a class."""
    judged = [r for r in rows if r.correct is not None]
    errors = sum(1 for r in rows if r.error)
    if not judged:
        return FolderSummary(len(rows), errors, None)
    def truth(r: FolderRow) -> str:
        return r.truth_label or r.item.truth or ""

    truths = sorted({truth(r) for r in judged})
    predicted = sorted({r.label or "" for r in judged} - set(truths))
    classes = truths + predicted
    pos = {c: i for i, c in enumerate(classes)}
    matrix = [[0] * len(classes) for _ in classes]
    for r in judged:
        guess = truth(r) if r.correct else (r.label or "")
        matrix[pos[truth(r)]][pos[guess]] += 1
    accuracy = sum(1 for r in judged if r.correct) / len(judged)
    return FolderSummary(len(rows), errors, accuracy, classes, matrix, len(truths))


def to_csv(rows: list[FolderRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(r.as_csv() for r in rows)
    return out.getvalue()
