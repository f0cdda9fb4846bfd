"""How an image is fitted to the model's input (crop, stretch, letterbox), and the mapping back
from the input's pixels to the original image's, so boxes and masks land where they belong."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from onnxstudio.errors import InputError

RESIZES = ("crop", "stretch", "letterbox")
LETTERBOX_FILL = (114, 114, 114)  # the grey YOLO-style letterboxing pads with


@dataclass(frozen=True)
class Geometry:
    """x_input = x_original * scale_x + shift_x (and the same for y)."""

    width: int  # the original image's size
    height: int
    scale_x: float
    scale_y: float
    shift_x: float
    shift_y: float

    def to_original(self, boxes: np.ndarray) -> np.ndarray:
        """(M, 4) corner boxes in input pixels -> original pixels, clipped to the image."""
        out = np.asarray(boxes, dtype=np.float64).copy()
        out[:, [0, 2]] = (out[:, [0, 2]] - self.shift_x) / self.scale_x
        out[:, [1, 3]] = (out[:, [1, 3]] - self.shift_y) / self.scale_y
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, self.width)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, self.height)
        return out

    def sample(self, plane: np.ndarray, fill: int = -1) -> np.ndarray:
        """A per-pixel map in input pixels, resampled (nearest) onto the original image;
        pixels the model never saw (cropped away, letterbox) get ``fill``."""
        h, w = plane.shape
        xs = np.floor((np.arange(self.width) + 0.5) * self.scale_x + self.shift_x).astype(int)
        ys = np.floor((np.arange(self.height) + 0.5) * self.scale_y + self.shift_y).astype(int)
        xin, yin = (xs >= 0) & (xs < w), (ys >= 0) & (ys < h)
        out = np.full((self.height, self.width), fill, dtype=np.int32)
        sub = plane[np.clip(ys, 0, h - 1)][:, np.clip(xs, 0, w - 1)]
        mask = yin[:, None] & xin[None, :]
        out[mask] = sub[mask]
        return out


def geometry_of(height: int, width: int, size: tuple[int, int], mode: str) -> Geometry:
    """The mapping ``resize_image`` applies to an image of height x width."""
    th, tw = size
    if mode == "stretch":
        return Geometry(width, height, tw / width, th / height, 0.0, 0.0)
    if mode == "letterbox":
        s = min(th / height, tw / width)
        nw, nh = max(1, round(width * s)), max(1, round(height * s))
        return Geometry(width, height, nw / width, nh / height, float((tw - nw) // 2),
                        float((th - nh) // 2))
    if mode == "crop":
        s = max(th / height, tw / width) * 256 / 224
        nw, nh = max(tw, round(width * s)), max(th, round(height * s))
        return Geometry(width, height, nw / width, nh / height, -float((nw - tw) // 2),
                        -float((nh - th) // 2))
    raise InputError(f"unknown resize mode {mode!r} (choose from {', '.join(RESIZES)})")


def resize_image(rgb: np.ndarray, size: tuple[int, int], mode: str) -> np.ndarray:
    """crop: shorter side to 256/224 of the target then centre crop; stretch; letterbox."""
    th, tw = size
    img = Image.fromarray(rgb)
    g = geometry_of(img.height, img.width, size, mode)
    nw, nh = round(g.scale_x * img.width), round(g.scale_y * img.height)
    scaled = img.resize((nw, nh), Image.Resampling.BILINEAR)
    if mode == "stretch":
        out = scaled
    elif mode == "letterbox":
        out = Image.new("RGB", (tw, th), LETTERBOX_FILL)
        out.paste(scaled, (int(g.shift_x), int(g.shift_y)))
    else:
        left, top = int(-g.shift_x), int(-g.shift_y)
        out = scaled.crop((left, top, left + tw, top + th))
    return np.asarray(out.convert("RGB"))
