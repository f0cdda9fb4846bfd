"""Print pip constraints pinning every runtime dependency to the oldest version
pyproject.toml allows (its ``>=`` floor), for CI's oldest-versions run.

    python scripts/oldest_constraints.py > oldest.txt
    pip install -c oldest.txt -e '.[dev]'

Markers are kept, so a floor that depends on the Python version pins only there.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def oldest(requirements: list[str]) -> list[str]:
    """``name==floor ; marker`` for each requirement with a ``>=`` floor."""
    pins = []
    for text in requirements:
        requirement = Requirement(text)
        for spec in requirement.specifier:
            if spec.operator == ">=":
                marker = f" ; {requirement.marker}" if requirement.marker else ""
                pins.append(f"{requirement.name}=={spec.version}{marker}")
    return pins


def main() -> int:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    print("\n".join(oldest(project["dependencies"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
