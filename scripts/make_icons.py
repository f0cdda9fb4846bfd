"""Render the SVG icons to hicolor PNG sizes (and a Windows .ico) with Qt's own SVG renderer.

The PNGs are committed: desktops that cannot scale SVG icons (and small-size lookups) use
them, and the Windows/macOS installers need raster icons. Re-run after editing an SVG:

    QT_QPA_PLATFORM=offscreen python scripts/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICON_DIR = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICONS = {  # svg -> hicolor context
    "onnxstudio.svg": "apps",
    "application-x-onnx.svg": "mimetypes",
}


def render(svg: Path, size: int, out: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out), "PNG"):
        raise SystemExit(f"could not write {out}")


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    for name, context in ICONS.items():
        stem = Path(name).stem
        for size in SIZES:
            out = ICON_DIR / "hicolor" / f"{size}x{size}" / context / f"{stem}.png"
            render(ICON_DIR / name, size, out)
    # Windows (.ico, for Inno Setup and PyInstaller) wants a multi-size icon; on macOS
    # PyInstaller converts the 512 px PNG to .icns itself (with Pillow installed).
    pngs = {s: ICON_DIR / "hicolor" / f"{s}x{s}" / "apps" / "onnxstudio.png" for s in SIZES}
    with Image.open(pngs[256]) as big:
        ico_sizes = [(s, s) for s in (16, 24, 32, 48, 64, 128, 256)]
        big.save(ICON_DIR / "onnxstudio.ico", sizes=ico_sizes)
    print(f"wrote {len(SIZES) * len(ICONS)} PNGs and onnxstudio.ico")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
