"""The user's preprocessing choice, remembered per model by content hash (a renamed or
copied file keeps it), in a small JSON file beside the app's settings."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, fields
from pathlib import Path

from onnxstudio.runner.preprocess import PreprocessOptions

FILE_NAME = "preprocess-choices.json"
WHOLE_FILE_LIMIT = 256 << 20  # larger models: size + first and last 16 MB
EDGE = 16 << 20
REMEMBERED = "remembered for this model"


def model_key(path: str | Path) -> str:
    """A content hash of the model file (sampled for very large files)."""
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with p.open("rb") as f:
        if size <= WHOLE_FILE_LIMIT:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        else:
            h.update(f.read(EDGE))
            f.seek(size - EDGE)
            h.update(f.read(EDGE))
    return h.hexdigest()


def settings_dir() -> Path:
    folder = os.environ.get("ONNXSTUDIO_SETTINGS_DIR")
    if folder:
        return Path(folder)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "onnxstudio"


class ChoiceStore:
    """key -> PreprocessOptions, read and written whole (a few hundred entries at most)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or settings_dir() / FILE_NAME

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> PreprocessOptions | None:
        entry = self._read().get(key)
        if not isinstance(entry, dict):
            return None
        names = {f.name for f in fields(PreprocessOptions)} - {"source"}
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()
                  if k in names}
        try:
            return PreprocessOptions(**values, source=REMEMBERED)  # type: ignore[arg-type]
        except TypeError:
            return None

    def put(self, key: str, options: PreprocessOptions) -> None:
        data = self._read()
        entry = {k: v for k, v in asdict(options).items() if k != "source" and v is not None}
        if entry:
            data[key] = entry
        else:
            data.pop(key, None)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)
