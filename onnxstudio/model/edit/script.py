"""Edit scripts (JSON files) and the CLI's shortcuts for the common edits.

A script is ``{"onnxstudio_edits": 1, "edits": [...]}`` (a bare list is accepted too).
A ``.npy`` path in a script is relative to the script's own folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from onnxstudio.errors import EditError
from onnxstudio.model.edit.ops import OPERATIONS

FORMAT_VERSION = 1


def load_script(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EditError(f"{path.name}: script not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise EditError(f"{path.name}: cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise EditError(f"{path.name}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    edits = data.get("edits") if isinstance(data, dict) else data
    if not isinstance(edits, list):
        raise EditError(f"{path.name}: expected a list of edits, or an object with 'edits'")
    result = []
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, dict) or edit.get("op") not in OPERATIONS:
            op = edit.get("op") if isinstance(edit, dict) else edit
            raise EditError(f"{path.name}: edit {number}: unknown operation {op!r} "
                            f"(known: {', '.join(OPERATIONS)})")
        if edit["op"] == "set_initializer" and isinstance(edit.get("npy"), str):
            edit = {**edit, "npy": str(path.parent / Path(edit["npy"]).expanduser())}
        result.append(edit)
    return result


def script_text(edits: Iterable[Mapping[str, Any]]) -> str:
    """The script as written to a file (stable key order, one edit per line)."""
    lines = [json.dumps(dict(e), ensure_ascii=False) for e in edits]
    body = ",\n    ".join(lines)
    return (f'{{\n  "onnxstudio_edits": {FORMAT_VERSION},\n  "edits": [\n    {body}\n  ]\n}}\n'
            if lines else f'{{"onnxstudio_edits": {FORMAT_VERSION}, "edits": []}}\n')


def _pair(text: str, flag: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise EditError(f"{flag} {text}: expected NAME=VALUE")
    return key, value


def _dim_value(text: str) -> int | str | None:
    if text in ("", "?"):
        return None
    return int(text) if text.isdigit() else text


def shortcut_edits(*, set_dim: Iterable[str] = (), rename_input: Iterable[str] = (),
                   add_output: Iterable[str] = (), remove_node: Iterable[str] = (),
                   set_meta: Iterable[str] = (), outputs: Iterable[str] = ()
                   ) -> list[dict[str, Any]]:
    """The CLI's ``--set-dim input:0=1``-style options as edits, in that order.

    ``outputs``: the model's output names (``--set-dim`` on one sets an output's dim).
    """
    outputs = set(outputs)
    edits: list[dict[str, Any]] = []
    for item in set_dim:
        target, value = _pair(item, "--set-dim")
        name, sep, axis = target.rpartition(":")
        if not sep or not name or not axis.lstrip("-").isdigit():
            raise EditError(f"--set-dim {item}: expected NAME:AXIS=VALUE (e.g. input:0=1)")
        side = "output" if name in outputs else "input"
        edits.append({"op": "set_dim", side: name, "axis": int(axis),
                      "value": _dim_value(value)})
    for item in rename_input:
        old, new = _pair(item, "--rename-input")
        edits.append({"op": "rename", "kind": "input", "from": old, "to": new})
    edits += [{"op": "add_output", "tensor": name} for name in add_output]
    edits += [{"op": "remove_node", "node": name} for name in remove_node]
    for item in set_meta:
        key, value = _pair(item, "--set-meta")
        edits.append({"op": "set_metadata", "key": key, "value": value or None})
    return edits
