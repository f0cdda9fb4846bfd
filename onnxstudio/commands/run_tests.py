"""`onnxstudio run MODEL test_data_set_0` (or a folder of sets, ``x.pb``, ``inputs.npz``):
the verdict lines of one set, and the table of a folder of sets."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from onnxstudio.runner.pipeline import RunOutcome
from onnxstudio.runner.testdata import Verdict, is_test_set, test_sets

_MARKS = {"pass": "✓", "fail": "✗", "error": "!", "none": " "}


def is_table(path: Path) -> bool:
    """A folder of test_data_set_N folders, which `run` shows as one row per set."""
    return path.is_dir() and not is_test_set(path) and bool(test_sets(path))


def verdict_lines(check: Verdict) -> list[str]:
    """The expected outputs of one set, one line each, then the verdict."""
    lines = [f"   expected {c.describe()}" for c in check.checks]
    lines.append(f"   verdict {check.summary()}")
    return lines


def table_row(outcome: RunOutcome) -> tuple[dict[str, Any], str]:
    """(JSON object, text line) of one set in a table."""
    check = outcome.check or Verdict(outcome.source)
    worst = max((c.max_abs for c in check.checks), default=0.0)
    data = {"set": outcome.source, "verdict": check.word, "max_abs": worst,
            "expected": [c.as_json() for c in check.checks], "error": check.error or None,
            "latency_ms": outcome.latency_ms}
    first = check.first_failure()
    detail = check.error or (first.reason if first else f"max |Δ| {worst:.3g}")
    text = f"{_MARKS[check.word]} {outcome.source:<24} {check.word:<6} {detail}"
    return data, text


def table_summary(folder: Path, outcomes: list[RunOutcome]) -> tuple[dict[str, Any], str]:
    """(JSON object, text line) closing a table: counts per verdict and the overall one."""
    words = Counter((o.check or Verdict(o.source)).word for o in outcomes)
    overall = "fail" if words["fail"] or words["error"] else "pass"
    data = {"folder": str(folder), "sets": len(outcomes), "passed": words["pass"],
            "failed": words["fail"], "cannot_run": words["error"], "verdict": overall}
    text = (f"== {len(outcomes)} test sets: {words['pass']} pass, {words['fail']} fail, "
            f"{words['error']} cannot run")
    return data, text


def failed(outcomes: list[RunOutcome]) -> bool:
    """Whether any set failed or could not run: `run` then exits 1."""
    return any(o.check is not None and o.check.word in ("fail", "error") for o in outcomes)
