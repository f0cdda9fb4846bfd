"""Edit a model as data: small operations with inverses, checks, scripts and safe saving."""

from onnxstudio.model.edit.check import CheckReport, check_edited
from onnxstudio.model.edit.ops import OPERATIONS, apply_edit, apply_edits, describe
from onnxstudio.model.edit.save import SavedModel, save_edited
from onnxstudio.model.edit.script import load_script, script_text, shortcut_edits
from onnxstudio.model.edit.session import EditSession, Step

__all__ = [
    "OPERATIONS", "CheckReport", "EditSession", "SavedModel", "Step", "apply_edit",
    "apply_edits", "check_edited", "describe", "load_script", "save_edited", "script_text",
    "shortcut_edits",
]
