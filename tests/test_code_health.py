"""Dead code does not pile up: vulture finds nothing unused in the package.

Run over the package and the tests together (a helper only tests call is still used);
tests/vulture_whitelist.py names what libraries and Qt read. The tests themselves are
not checked yet (pytest fixtures taken only for their effect look unused).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

NOT_YET = ("tests/",)
def test_vulture_finds_no_dead_code_in_the_package() -> None:
    pytest.importorskip("vulture", reason="pip install vulture (dev extra)")
    result = subprocess.run(
        [sys.executable, "-m", "vulture", "onnxstudio", "tests", "--min-confidence", "60"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode in (0, 3), result.stderr  # 3: dead code found
    lines = [ln for ln in result.stdout.splitlines() if ln and not ln.startswith(NOT_YET)]
    assert lines == []
