"""Feature-map mosaics and table slices: geometry, hit-testing and normalisation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from onnxstudio.runner.featuremaps import MIN_TILE, feature_map_grid, table_slice


def _tile_pixels(grid, channel: int) -> np.ndarray:
    t = grid.tiles[channel]
    return grid.image[t.y:t.y + t.h, t.x:t.x + t.w]


def _normalised(m: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.rint((m.astype(np.float64) - lo) / (hi - lo) * 255).astype(np.uint8)


def test_mosaic_geometry_and_pixels_of_small_maps() -> None:
    rng = np.random.default_rng(0)
    arr = rng.normal(size=(2, 5, 8, 8)).astype(np.float32)
    grid = feature_map_grid(arr, batch=1)
    assert (grid.shown, grid.total, grid.batch) == (5, 5, 1)
    assert grid.cell == 6  # 8 px maps enlarged to 48 px
    assert grid.columns == 3  # 5 maps: 3 x 2, near square
    side, gap = 8 * grid.cell, grid.gap
    assert 1 <= gap <= 2
    assert grid.image.dtype == np.uint8 and grid.image.ndim == 2
    assert grid.image.shape == (2 * (side + gap) + gap, 3 * (side + gap) + gap)
    assert [(t.channel, t.x, t.y, t.w, t.h) for t in grid.tiles] == [
        (c, gap + (c % 3) * (side + gap), gap + (c // 3) * (side + gap), side, side)
        for c in range(5)]
    for c in range(5):
        m = arr[1, c]
        expected = _normalised(m, float(m.min()), float(m.max()))
        expected = expected.repeat(grid.cell, 0).repeat(grid.cell, 1)
        np.testing.assert_array_equal(_tile_pixels(grid, c), expected)
        assert grid.tiles[c].lo == pytest.approx(float(m.min()))
        assert grid.tiles[c].hi == pytest.approx(float(m.max()))


@pytest.mark.parametrize("side", [7, 8, 13, 28])
def test_tiny_maps_are_enlarged_to_legible_tiles(side: int) -> None:
    grid = feature_map_grid(np.ones((1, 256, side, side), np.float32))
    assert grid.tiles[0].w >= MIN_TILE and grid.tiles[0].w == side * grid.cell
    assert (grid.shown, grid.total) == (64, 256)
    assert grid.columns == 8  # 64 square maps: 8 x 8
    assert grid.image.shape[1] <= 2048


def test_large_maps_wrap_and_very_wide_maps_are_thinned_to_the_width_cap() -> None:
    grid = feature_map_grid(np.zeros((1, 64, 300, 300), np.float32))
    assert grid.cell == 1 and grid.step == 1
    assert grid.image.shape[1] <= 2048 and grid.columns == 6  # 8 would be 2418 px
    assert len(grid.tiles) == 64

    wide = np.arange(3 * 10 * 5000, dtype=np.float32).reshape(3, 10, 5000)
    thin = feature_map_grid(wide, max_width=1000)
    assert thin.step == 6 and thin.image.shape[1] <= 1000
    t = thin.tiles[1]
    assert t.h == 2  # 10 rows, every 6th
    assert thin.pixel_at(t.x + 100, t.y + 1) == (1, 6, 600)


def test_narrow_width_fills_the_space_without_shrinking_below_the_minimum() -> None:
    grid = feature_map_grid(np.ones((1, 64, 7, 7), np.float32), tile=128, max_width=360)
    assert grid.image.shape[1] <= 360
    assert grid.tiles[0].w >= MIN_TILE
    assert grid.image.shape[1] > 300  # wrapped into as many columns as fit, not 1 or 2


def test_tile_at_hits_tiles_and_misses_gaps_and_empty_cells() -> None:
    grid = feature_map_grid(np.random.default_rng(1).random((1, 5, 8, 8)))
    for t in grid.tiles:
        assert grid.tile_at(t.x + t.w // 2, t.y + t.h // 2) == t.channel
        assert grid.tile_at(t.x, t.y) == t.channel
        assert grid.tile_at(t.x + t.w - 1, t.y + t.h - 1) == t.channel
        assert grid.tile_at(t.x + t.w, t.y) is None  # the gap to the right
        assert grid.tile_at(t.x - 1, t.y) is None
    last = grid.tiles[-1]
    assert grid.tile_at(last.x + last.w + grid.gap + 5, last.y + 5) is None  # empty cell
    assert grid.tile_at(0, 0) is None
    assert grid.tile_at(grid.image.shape[1] + 10, 5) is None
    assert grid.tile_at(-3, 10) is None


def test_pixel_at_maps_back_to_the_source_value() -> None:
    arr = np.arange(2 * 8 * 8, dtype=np.float32).reshape(1, 2, 8, 8)
    grid = feature_map_grid(arr)
    t = grid.tiles[1]
    channel, row, col = grid.pixel_at(t.x + 3 * grid.cell + 1, t.y + 5 * grid.cell + 2)
    assert (channel, row, col) == (1, 5, 3)
    assert arr[0, channel, row, col] == 64 + 5 * 8 + 3


def test_per_map_and_global_normalisation() -> None:
    arr = np.zeros((1, 2, 4, 4), np.float32)
    arr[0, 0] = np.linspace(0, 1, 16).reshape(4, 4)
    arr[0, 1] = np.linspace(0, 10, 16).reshape(4, 4)
    per_map = feature_map_grid(arr, scale="per-map")
    assert _tile_pixels(per_map, 0).max() == 255 and _tile_pixels(per_map, 1).max() == 255
    glob = feature_map_grid(arr, scale="global")
    assert _tile_pixels(glob, 0).max() == round(1 / 10 * 255)
    assert _tile_pixels(glob, 1).max() == 255
    assert _tile_pixels(glob, 0).min() == 0
    with pytest.raises(ValueError, match="scale"):
        feature_map_grid(arr, scale="log")


def test_constant_nan_and_inf_maps_without_warnings() -> None:
    arr = np.zeros((1, 5, 4, 4), np.float32)
    arr[0, 1] = 3.0  # constant, non-zero
    arr[0, 2] = np.nan  # nothing finite
    arr[0, 3] = np.linspace(-1, 1, 16).reshape(4, 4)
    arr[0, 3, 0, 0] = np.nan
    arr[0, 3, 0, 1] = np.inf
    arr[0, 3, 0, 2] = -np.inf
    arr[0, 4] = np.float32(3e38)
    arr[0, 4, 0, 0] = np.float32(-3e38)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scale in ("per-map", "global"):
            grid = feature_map_grid(arr, scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grid = feature_map_grid(arr)
    assert np.all(_tile_pixels(grid, 0) == 0)  # dead channel: black
    assert np.all(_tile_pixels(grid, 1) == 128)  # constant: mid-grey
    assert np.all(_tile_pixels(grid, 2) == 0)
    assert grid.tiles[2].lo is None and grid.tiles[2].hi is None
    t3 = _tile_pixels(grid, 3)[:: grid.cell, :: grid.cell]
    assert (t3[0, 0], t3[0, 1], t3[0, 2]) == (0, 255, 0)  # NaN, +Inf, -Inf
    assert grid.tiles[3].lo == pytest.approx(-1 + 2 * 3 / 15)  # finite values only
    assert grid.tiles[3].hi == pytest.approx(1.0)
    t4 = _tile_pixels(grid, 4)[:: grid.cell, :: grid.cell]
    assert t4[0, 0] == 0 and t4[1, 1] == 255  # a full-float32 range still spans 0..255


def test_three_d_maps_and_bad_inputs() -> None:
    grid = feature_map_grid(np.ones((3, 6, 9), np.float64))
    assert grid.shown == 3 and grid.tiles[0].w == 9 * grid.cell
    assert grid.tiles[0].h == 6 * grid.cell
    for bad in (np.zeros((4, 4)), np.zeros(4), np.zeros(()), np.zeros((1, 2, 3, 4, 5))):
        with pytest.raises(ValueError, match="4-D"):
            feature_map_grid(bad)
    with pytest.raises(IndexError):
        feature_map_grid(np.zeros((2, 3, 4, 4)), batch=2)
    with pytest.raises(ValueError, match="empty"):
        feature_map_grid(np.zeros((1, 0, 4, 4)))
    with pytest.raises(ValueError, match="numbers"):
        feature_map_grid(np.array([[["a"]]]))
    assert feature_map_grid(np.zeros((1, 100, 4, 4)), max_maps=10).shown == 10


def test_table_slice_shapes_views_and_validation() -> None:
    assert table_slice(np.float32(2.5), []).shape == (1, 1)
    assert table_slice(np.float32(2.5), [])[0, 0] == 2.5
    vec = np.arange(7)
    col = table_slice(vec, [])
    assert col.shape == (7, 1) and col[4, 0] == 4
    mat = np.arange(12).reshape(3, 4)
    assert table_slice(mat, []) is mat or np.shares_memory(table_slice(mat, []), mat)
    arr = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    part = table_slice(arr, [1, 2])
    np.testing.assert_array_equal(part, arr[1, 2])
    assert np.shares_memory(part, arr)  # a view: a 1M-value tensor is not copied
    with pytest.raises(ValueError, match="2 leading"):
        table_slice(arr, [1])
    with pytest.raises(ValueError):
        table_slice(mat, [0])
    with pytest.raises(IndexError, match="dim 1"):
        table_slice(arr, [1, 3])
    with pytest.raises(IndexError):
        table_slice(arr, [-1, 0])
