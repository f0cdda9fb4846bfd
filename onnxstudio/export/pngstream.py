"""A PNG encoder fed band by band, so a 16k × 16k export never holds the whole image.

QImage.save needs the full image in memory (1 GB at 16k²); here the rows arrive in
strips painted one after another and are deflated as they come. Qt-free.
"""

from __future__ import annotations

import struct
import zlib
from typing import IO

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(payload, zlib.crc32(kind)) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


class PngStreamWriter:
    """Write an 8-bit RGB PNG of known size to ``stream``, rows supplied top to bottom."""

    IDAT_SIZE = 1 << 20

    def __init__(self, stream: IO[bytes], width: int, height: int, dpi: float | None = None,
                 level: int = 6) -> None:
        if width <= 0 or height <= 0:
            raise ValueError("empty image")
        self._stream = stream
        self.width, self.height = width, height
        self.rows_written = 0
        self._zip = zlib.compressobj(level)
        self._pending = bytearray()
        stream.write(_SIGNATURE)
        stream.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        if dpi:
            ppm = round(dpi / 0.0254)
            stream.write(_chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1)))
        stream.write(_chunk(b"tEXt", b"Software\x00onnxstudio"))

    def _flush(self, final: bool = False) -> None:
        while len(self._pending) >= self.IDAT_SIZE or (final and self._pending):
            part = bytes(self._pending[: self.IDAT_SIZE])
            del self._pending[: self.IDAT_SIZE]
            self._stream.write(_chunk(b"IDAT", part))

    def write_rows(self, rgb: np.ndarray) -> None:
        """Append rows: a uint8 array of shape (rows, width, 3)."""
        if rgb.ndim != 3 or rgb.shape[1] != self.width or rgb.shape[2] != 3:
            raise ValueError(f"rows must be (n, {self.width}, 3), got {rgb.shape}")
        if self.rows_written + rgb.shape[0] > self.height:
            raise ValueError("more rows than the image height")
        rows = np.empty((rgb.shape[0], self.width * 3 + 1), dtype=np.uint8)
        rows[:, 0] = 1  # "Sub" filter: flat backgrounds become runs of zeros
        flat = rgb.reshape(rgb.shape[0], self.width * 3).astype(np.int16)
        rows[:, 4:] = (flat[:, 3:] - flat[:, :-3]).astype(np.uint8)
        rows[:, 1:4] = rgb[:, 0, :]
        self._pending += self._zip.compress(rows.tobytes())
        self.rows_written += rgb.shape[0]
        self._flush()

    def close(self) -> None:
        if self.rows_written != self.height:
            raise ValueError(f"{self.rows_written} of {self.height} rows written")
        self._pending += self._zip.flush()
        self._flush(final=True)
        self._stream.write(_chunk(b"IEND", b""))
