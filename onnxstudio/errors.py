"""Typed errors whose message is already fit to show a user (banner, dialog, CLI line)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

# One-line message -> the whole text it was made from (onnxruntime's C++ signatures, onnx's
# assertion): messages cross threads as plain strings through Qt signals, so the banner's
# Details finds the full text by the line it shows. The newest few are kept.
_DETAILS: OrderedDict[str, str] = OrderedDict()
_KEPT = 64


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


def with_details(message: str, details: str) -> str:
    """``message``, with ``details`` (the unabridged text) kept for `details_for`."""
    line = _one_line(message)
    if details.strip() and details.strip() != line:
        _DETAILS[line] = details.strip()
        _DETAILS.move_to_end(line)
        while len(_DETAILS) > _KEPT:
            _DETAILS.popitem(last=False)
    return message


def details_for(message: str) -> str:
    """The whole text behind a shown line ("" if it is all there is); the line may carry
    a prefix (a file name) added after it was made."""
    for line, details in reversed(_DETAILS.items()):
        if line in message:
            return details
    return ""


class SystemSetupError(OnnxStudioError):
    """The machine lacks something outside Python the app needs: a display, a system
    library (see system_libraries.py); the message names what to install."""


def _one_line(text: str) -> str:
    """Control characters shown escaped (a name may hold \\x1b), whitespace runs as one."""
    shown = []
    for c in text:
        if c in "\n\r\t":
            shown.append(" ")
        elif c.isprintable():
            shown.append(c)
        else:
            shown.append(c.encode("unicode_escape").decode("ascii"))
    return " ".join("".join(shown).split())


def user_message(exc: BaseException) -> str | None:
    """The one line a user can act on for a failure the app expects; None for a bug.

    This is the one place where exception types that escape the core (from onnx,
    protobuf, numpy, the OS) are mapped to words; the CLI and the window both use it.
    """
    if isinstance(exc, OnnxStudioError):
        return _one_line(str(exc))
    if isinstance(exc, MemoryError):
        return "out of memory (the model or an input is too large for this machine)"
    if isinstance(exc, RecursionError):
        return "the model nests too deeply to be read"
    if isinstance(exc, ImportError):  # PySide6 without a system library Qt links against
        from onnxstudio.system_libraries import library_message

        return library_message(exc)
    if isinstance(exc, OSError) and exc.strerror:
        where = Path(exc.filename).name if exc.filename else ""
        return _one_line(f"{where}: {exc.strerror}" if where else exc.strerror)
    return None


def describe_failure(exc: BaseException) -> str:
    """user_message, or a one-line internal error naming the exception for a bug report."""
    known = user_message(exc)
    if known is not None:
        return known
    lines = [line for line in str(exc).splitlines() if line.strip()]
    detail = f": {lines[0][:300]}" if lines else ""
    return _one_line(f"internal error ({type(exc).__name__}{detail})")
