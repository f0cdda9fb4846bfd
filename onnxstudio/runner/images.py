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


def to_rgb_array(img: Image.Image) -> np.ndarray:
    """RGB uint8 (H, W, 3); transparency is composited on white, 16-bit greys scaled down."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(img, dtype=np.float64)
        top = 65535.0 if arr.max() > 255 else 255.0
        grey = np.clip(arr / top * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return np.repeat(grey[:, :, None], 3, axis=2)
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        return np.asarray(background.convert("RGB"))
    return np.asarray(img.convert("RGB"))
