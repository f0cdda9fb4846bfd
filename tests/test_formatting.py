"""The one place numbers, durations, sizes and shapes are written (panels and CLI)."""

from __future__ import annotations

import math

import numpy as np

from onnxstudio.model.formatting import (
    format_duration,
    format_ms,
    format_number,
    human_bytes,
    human_count,
    shape_list,
    shape_text,
)


def test_numbers_keep_significant_digits_and_spell_out_non_finite() -> None:
    assert format_number(1 / 3) == "0.333333"
    assert format_number(np.float32(0.1), 3) == "0.1"
    assert format_number(123456.0, 3) == "1.23e+05"
    assert [format_number(v, 3) for v in (math.inf, -math.inf, math.nan)] == \
        ["inf", "-inf", "nan"]
    assert format_number(7) == "7"
    assert format_number(b"caf\xc3\xa9") == "café"


def test_milliseconds_have_three_significant_digits() -> None:
    assert [format_ms(v) for v in (123.4, 12.34, 1.234, 0.1234)] == \
        ["123", "12.3", "1.23", "0.123"]


def test_durations_carry_their_unit() -> None:
    assert [format_duration(v) for v in (123.4, 1.234, 0.05, 0.004)] == \
        ["123 ms", "1.2 ms", "0.05 ms", "4.0 µs"]


def test_sizes_and_counts() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(25_088) == "24.5 KB"
    assert human_bytes(3 * 1024**3) == "3.0 GB"
    assert human_count(25_557_032) == "25.56M"
    assert human_count(999) == "999"


def test_shapes_compact_and_listed() -> None:
    assert shape_text([1, 3, None, "batch"]) == "1×3×?×batch"
    assert shape_text([]) == "scalar"
    assert shape_text(None) == "?"
    assert shape_list([1, None, 3]) == "[1, ?, 3]"
    assert shape_list(None) == "?"


def test_elide_path_cuts_a_dotted_weight_name_at_its_dots_keeping_the_layer() -> None:
    from onnxstudio.model.formatting import elide_path

    name = "encoder.layer.0.attention.self.query.weight"
    assert elide_path(name, lambda t: len(t) <= 21) == "…layer.0…query.weight"
    assert elide_path("1.5", lambda t: False) == "1.5"  # a number is no path


def test_a_tables_counts_have_three_digits() -> None:
    """The Cost dock's number columns: 590K, not 589.82K, and a unit up, not 1000K."""
    from onnxstudio.model.formatting import short_count

    assert [short_count(n) for n in (0, 999, 1234, 589_824, 999_600, 2_359_296,
                                     123_456_789, 1_234_567_890_123)] == \
        ["0", "999", "1.23K", "590K", "1M", "2.36M", "123M", "1.23T"]
