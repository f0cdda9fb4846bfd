"""Reading user images: every accepted format; bombs, truncated and unreadable files refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from onnxstudio.errors import InputError
from onnxstudio.runner import images


def _picture() -> Image.Image:
    arr = np.zeros((20, 30, 3), np.uint8)
    arr[:, :15] = (200, 30, 40)
    return Image.fromarray(arr)


@pytest.mark.parametrize("suffix", [".png", ".jpg", ".bmp", ".tiff", ".webp", ".gif"])
def test_reads_each_format(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"pic{suffix}"
    _picture().save(path)
    rgb = images.load_image(path)
    assert rgb.shape == (20, 30, 3) and rgb.dtype == np.uint8
    assert rgb[10, 5, 0] > 150 and rgb[10, 25].max() < 30


def test_gif_gives_the_first_frame(tmp_path: Path) -> None:
    red = Image.new("RGB", (8, 8), (255, 0, 0))
    blue = Image.new("RGB", (8, 8), (0, 0, 255))
    path = tmp_path / "anim.gif"
    red.save(path, save_all=True, append_images=[blue])
    rgb = images.load_image(path)
    assert rgb[0, 0, 0] > 200 and rgb[0, 0, 2] < 50


def test_transparency_is_composited_on_white(tmp_path: Path) -> None:
    path = tmp_path / "alpha.png"
    Image.new("RGBA", (4, 4), (0, 0, 0, 0)).save(path)
    assert images.load_image(path).min() == 255


@pytest.mark.parametrize("pixels", [40 * 40, 100 * 100])  # warning range, error range
def test_decompression_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       pixels: int) -> None:
    """Pillow only warns between its limit and twice it; both are refused here."""
    monkeypatch.setattr(images, "MAX_PIXELS", 1000)
    side = int(pixels**0.5)
    path = tmp_path / "bomb.png"
    Image.new("L", (side, side)).save(path)
    with pytest.raises(InputError, match=r"bomb\.png: image too large.*decompression bomb"):
        images.load_image(path)


def test_truncated_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8)).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.jpg: .*truncated"):
        images.load_image(path)


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    with pytest.raises(InputError, match=r"notes\.png: not a readable image"):
        images.load_image(path)
    with pytest.raises(InputError, match=r"gone\.png: file not found"):
        images.load_image(tmp_path / "gone.png")
