"""Reads the font lists (fonts.txt, fonts-heldout.txt) shared by the model scripts."""
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
LISTS = {"train": HERE / "fonts.txt", "heldout": HERE / "fonts-heldout.txt"}


@dataclass(frozen=True)
class Face:
    family: str
    style: str
    package: str
    path: str

    @property
    def name(self) -> str:
        """A file-name-safe id, e.g. 'DejaVu_Sans_Mono-Bold'."""
        return f"{self.family}-{self.style}".replace(" ", "_").replace("/", "_")


def load(which: str = "train") -> list[Face]:
    faces = []
    for line in LISTS[which].read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        family, style, package, path = line.split("\t")
        faces.append(Face(family, style, package, path))
    return faces


def packages() -> list[str]:
    return sorted({f.package for which in LISTS for f in load(which)})
