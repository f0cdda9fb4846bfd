"""Regenerate imagenet1k.txt: the 1000 ImageNet-1k class names in the usual index order, and
imagenet1k_wnids.txt: their WordNet ids (n01440764 ...), which name ImageNet-style folders.

Source: the `timm` wheel from PyPI (Apache-2.0): timm/data/_info/imagenet_synsets.txt gives the
synset order, imagenet_synset_to_lemma.txt the WordNet lemmas; we keep each class's first lemma.
Usage: python scripts/make_imagenet_labels.py [--wheel PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

LABEL_DIR = Path(__file__).resolve().parent.parent / "resources" / "labels"
TIMM_VERSION = "1.0.31"


def fetch_wheel(dest: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", f"timm=={TIMM_VERSION}",
                    "--no-deps", "--only-binary=:all:", "-d", str(dest), "-q"], check=True)
    return next(dest.glob("timm-*.whl"))


def labels_from_wheel(wheel: Path) -> tuple[list[str], list[str]]:
    """(names, WordNet ids), both in class index order."""
    with zipfile.ZipFile(wheel) as z:
        synsets = z.read("timm/data/_info/imagenet_synsets.txt").decode().split()
        lemmas = {}
        for line in z.read("timm/data/_info/imagenet_synset_to_lemma.txt").decode().splitlines():
            key, _, names = line.partition("\t")
            lemmas[key] = names.split(",")[0].strip()
    if len(synsets) != 1000:
        raise SystemExit(f"expected 1000 synsets, found {len(synsets)}")
    return [lemmas[s] for s in synsets], synsets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wheel", type=Path, help="a timm wheel already downloaded")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(Path(tmp))
        names, wnids = labels_from_wheel(wheel)
    for file, lines in (("imagenet1k.txt", names), ("imagenet1k_wnids.txt", wnids)):
        (LABEL_DIR / file).write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {len(lines)} lines to {LABEL_DIR / file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
