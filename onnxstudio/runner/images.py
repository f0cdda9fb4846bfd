"""Read user-dropped images safely: a bomb, a truncated or unreadable file is an InputError."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from onnxstudio.errors import InputError

# The formats the run panel accepts (camera MPO files open through the JPEG plugin).
FORMATS = ("PNG", "JPEG", "BMP", "GIF", "TIFF", "WEBP")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".jpe", ".bmp", ".gif", ".tif", ".tiff", ".webp")
# Pillow's own default (~89 Mpx); kept explicit so a test can lower it.
MAX_PIXELS: int = 89_478_485
# Decoded bytes an image may need (pixels × channels, at least RGB, × bytes per sample),
# checked from the header before decoding: every 8-bit image within MAX_PIXELS fits, a
# 9400×9400 16-bit PNG (172 KB on disk, 530 MB decoded) does not.
MEMORY_BUDGET: int = 384 * 2**20
_SAMPLE_BYTES = {"I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2, "I": 4, "F": 4}


def is_image_path(path: str | Path) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


def load_image(path: str | Path) -> np.ndarray:
    """Decode the first frame of an image file to an RGB uint8 array (H, W, 3).

    Pillow only *warns* about images between its pixel limit and twice it; a user-dropped file
    that large is treated as a decompression bomb and refused, as are truncated files.
    """
    p = Path(path)
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            old_limit = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = MAX_PIXELS
            try:
                with Image.open(p, formats=FORMATS) as img:
                    img.seek(0)
                    _check_budget(p, img)
                    img.load()
                    # A phone photo stores its pixels sideways and says so in EXIF.
                    return to_rgb_array(ImageOps.exif_transpose(img) or img)
            finally:
                Image.MAX_IMAGE_PIXELS = old_limit
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InputError(f"{p.name}: image too large, refused as a possible "
                         f"decompression bomb ({exc})") from exc
    except FileNotFoundError as exc:
        raise InputError(f"{p.name}: file not found") from exc
    except UnidentifiedImageError as exc:
        raise InputError(f"{p.name}: not a readable image "
                         f"(supported: {', '.join(FORMATS)})") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        reason = str(exc) or type(exc).__name__
        if "truncated" in reason.lower() or isinstance(exc, EOFError):
            reason = f"image file is truncated or damaged ({reason})"
        raise InputError(f"{p.name}: cannot decode image: {reason}") from exc


def decoded_bytes(img: Image.Image) -> int:
    """What decoding ``img`` takes: pixels × channels (at least the RGB we make) × bytes."""
    width, height = img.size
    channels = max(len(img.getbands()), 3)
    return width * height * channels * _SAMPLE_BYTES.get(img.mode, 1)


def _check_budget(path: Path, img: Image.Image) -> None:
    need = decoded_bytes(img)
    if need > MEMORY_BUDGET:
        width, height = img.size
        raise InputError(f"{path.name}: a {width}×{height} {img.mode} image needs "
                         f"{need / 2**20:,.0f} MB to decode, beyond the "
                         f"{MEMORY_BUDGET / 2**20:,.0f} MB budget for images; refused")


def to_rgb_array(img: Image.Image) -> np.ndarray:
    """RGB uint8 (H, W, 3); transparency is composited on white, 16-bit greys scaled down."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(img)
        top = 65535.0 if arr.max() > 255 else 255.0
        grey = np.empty(arr.shape, np.uint8)
        for row in range(0, arr.shape[0], 512):  # float32 strips: memory stays bounded
            strip = arr[row:row + 512].astype(np.float32)
            grey[row:row + 512] = np.clip(strip / top * 255.0 + 0.5, 0, 255)
        return np.repeat(grey[:, :, None], 3, axis=2)
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        return np.asarray(background.convert("RGB"))
    return np.asarray(img.convert("RGB"))
