"""Class names for a classifier's output, from the first source that has the right count."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from onnxstudio.errors import InputError
from onnxstudio.resources import resource

METADATA_KEYS = ("labels", "classes", "class_labels", "class_names", "names", "label_names",
                 "synset")
BESIDE_NAMES = ("{stem}.labels.txt", "{stem}_labels.txt", "{stem}.classes.txt", "labels.txt",
                "classes.txt", "synset.txt", "synset_words.txt", "imagenet_classes.txt")
_SYNSET = re.compile(r"^n\d{8}\s+")


@dataclass(frozen=True)
class Labels:
    names: tuple[str, ...]
    source: str  # shown to the user: where the names came from

    def name(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else str(index)


def parse_labels(text: str) -> list[str]:
    """A JSON/Python list or {index: name} dict, else one name per line (synset ids dropped)."""
    stripped = text.strip()
    if stripped[:1] in "[{":
        value: object
        try:
            value = json.loads(stripped)
        except ValueError:
            try:
                value = ast.literal_eval(stripped)
            except (ValueError, SyntaxError):
                value = None
        if isinstance(value, list):
            return [str(v) for v in value]
        if isinstance(value, dict):
            try:
                items = sorted((int(k), str(v)) for k, v in value.items())
            except (TypeError, ValueError):
                return [str(v) for v in value.values()]
            return [v for _, v in items]
    lines = [ln.strip() for ln in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) == 1 and "," in lines[0] and not _SYNSET.match(lines[0]):
        return [p.strip() for p in lines[0].split(",")]
    return [_SYNSET.sub("", ln) for ln in lines]


def read_labels_file(path: str | Path) -> list[str]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"{p.name}: cannot read labels file ({exc.strerror or exc})") from exc
    names = parse_labels(text)
    if not names:
        raise InputError(f"{p.name}: the labels file is empty")
    return names


@lru_cache(maxsize=1)
def bundled_imagenet() -> tuple[str, ...]:
    path = resource("labels", "imagenet1k.txt")
    if not path.exists():
        return ()
    return tuple(ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip())


def bundled_wordnet_ids() -> tuple[str, ...]:
    """The WordNet id of each bundled ImageNet-1k class (``n02123045`` is "tabby"), the
    names ImageNet-style folders carry."""
    path = resource("labels", "imagenet1k_wnids.txt")
    if not path.exists():
        return ()
    return tuple(ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip())


def wordnet_class(folder: str, names: Sequence[str]) -> int | None:
    """The class index a WordNet-id folder name means, when ``names`` are the bundled
    ImageNet-1k classes (1001: after a background class)."""
    if not re.fullmatch(r"n\d{8}", folder):
        return None
    wnids, imagenet = bundled_wordnet_ids(), bundled_imagenet()
    if folder not in wnids or tuple(names[-len(imagenet):]) != imagenet:
        return None
    return wnids.index(folder) + len(names) - len(imagenet)


def _fit(names: Sequence[str], n: int | None) -> tuple[str, ...] | None:
    """Names if they fit n classes (n - 1 names: index 0 is a background class)."""
    if n is None or len(names) == n:
        return tuple(names)
    if len(names) == n - 1:
        return ("background", *names)
    return None


def resolve_labels(n_classes: int | None, model_path: str | Path | None = None,
                   metadata: Mapping[str, str] | None = None,
                   class_labels: Sequence[str] | None = None,
                   user_file: str | Path | None = None) -> Labels | None:
    """Model metadata, a file beside the model, ZipMap/classifier labels, bundled ImageNet-1k.

    A file the user picked explicitly wins over all of them (they chose it for a reason).
    """
    if user_file:
        names = read_labels_file(user_file)
        return Labels(tuple(names), Path(user_file).name)
    for key in METADATA_KEYS:
        value = (metadata or {}).get(key)
        if value:
            fitted = _fit(parse_labels(value), n_classes)
            if fitted:
                return Labels(fitted, f"model metadata '{key}'")
    if model_path is not None:
        mp = Path(model_path)
        for pattern in BESIDE_NAMES:
            candidate = mp.parent / pattern.format(stem=mp.stem)
            if candidate.is_file():
                try:
                    fitted = _fit(read_labels_file(candidate), n_classes)
                except InputError:
                    continue
                if fitted:
                    return Labels(fitted, candidate.name)
    if class_labels:
        fitted = _fit(list(class_labels), n_classes)
        if fitted:
            return Labels(fitted, "classifier node labels")
    if n_classes in (1000, 1001):
        imagenet = bundled_imagenet()
        if imagenet:
            fitted = _fit(imagenet, n_classes)
            if fitted:
                return Labels(fitted, "bundled ImageNet-1k")
    return None
