"""Typed errors whose message is already fit to show a user (banner, dialog, CLI line)."""

from __future__ import annotations

from pathlib import Path


class OnnxStudioError(Exception):
    """Base of every error the app expects; anything else is a bug."""


class Cancelled(OnnxStudioError):
    """The user stopped the work (Cancel, a newer request, closing); never shown as an error.

    The one type every background job raises when stopped; layout, export and runs
    raise it as their own subclasses so a caller can still tell which step stopped.
    """


class ModelLoadError(OnnxStudioError):
    """A model file could not be opened; the message names the file and the reason."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path.name}: {reason}")


class InputError(OnnxStudioError):
    """An input the user supplied (image, .npy, option) cannot be used."""


class RunError(OnnxStudioError):
    """onnxruntime refused the model or failed while running it."""


class ExportError(OnnxStudioError):
    """A diagram or model could not be written."""


class CutError(OnnxStudioError):
    """A sub-model cannot be cut as asked (unknown tensor, unreachable output, bad target)."""


class EditError(OnnxStudioError):
    """An edit cannot be applied (unknown name, refused removal, wrong dtype...) or saved."""
