"""Read an edit's fields with one clear message when one is missing or of the wrong type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from onnxstudio.errors import EditError

Edit = Mapping[str, Any]


def text(edit: Edit, key: str) -> str:
    value = edit.get(key)
    if not isinstance(value, str) or not value:
        raise EditError(f"{edit.get('op', 'edit')}: '{key}' must be a non-empty name")
    return value


def integer(edit: Edit, key: str) -> int:
    value = edit.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EditError(f"{edit.get('op', 'edit')}: '{key}' must be a whole number")
    return value


def names(edit: Edit, key: str) -> list[str]:
    value = edit.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EditError(f"{edit.get('op', 'edit')}: '{key}' must be a list of names")
    return list(value)
