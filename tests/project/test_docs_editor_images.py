"""The screenshots on the editors page: each one the page shows is committed, is a sound PNG or SVG
of a sane size, has a caption, and is still written by an end-to-end editor test (so a renamed or
dropped screenshot cannot leave a stale picture on the page)."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tools.editor_screenshots import SHOTS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "editors.md"
IMAGES = ROOT / "docs" / "images" / "editors"
IMAGE_REF = re.compile(r"!\[([^\]]*)\]\((images/editors/[^)\s]+)\)")
MAX_TOTAL = 1_500_000  # bytes, every picture together
MAX_ONE = 400_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def page_images(text: str) -> list[tuple[str, str, str]]:
    """(alt text, path under docs/, the paragraph after it) for each picture of the page."""
    found = []
    for match in IMAGE_REF.finditer(text):
        after = text[match.end() :].lstrip("\n")
        found.append((match.group(1), match.group(2), after.split("\n\n", 1)[0]))
    return found


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk; ValueError when the bytes are no PNG."""
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("no PNG signature and IHDR chunk")
    width, height = struct.unpack(">II", data[16:24])
    if not data.rstrip(b"\x00").endswith(b"IEND\xaeB`\x82"):
        raise ValueError("no IEND chunk: truncated")
    return width, height


def svg_size(data: bytes) -> tuple[float, float]:
    """Width and height of an SVG's viewBox; ValueError when it is no SVG picture with text."""
    root = ET.fromstring(data)
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        raise ValueError(f"root element is {root.tag}, not svg")
    box = root.get("viewBox", "").split()
    if len(box) != 4:
        raise ValueError("no viewBox")
    if not any(el.tag.endswith("text") and "".join(el.itertext()).strip() for el in root.iter()):
        raise ValueError("no text drawn: an empty screen")
    if re.search(rb"url\(\s*[\"']?(https?:)?//", data):
        raise ValueError("it loads something from outside (the site works offline)")
    return float(box[2]), float(box[3])


def written_names(source: str) -> set[str]:
    """File names a test source joins to a folder (``art / "vscode-problems.png"``), also inside the
    session scripts the tests embed as strings; commented-out lines do not count."""
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    return set(re.findall(r'/\s*"([\w.-]+\.(?:png|svg))"', code))


def _e2e_written_names() -> set[str]:
    """The names written by the end-to-end editor tests, wherever the test files live."""
    return {n for path in ROOT.joinpath("tests").rglob("test_editor*.py") for n in written_names(path.read_text())}


IMAGES_ON_PAGE = page_images(PAGE.read_text(encoding="utf-8"))


def test_the_editors_page_shows_every_listed_screenshot() -> None:
    shown = {path.removeprefix("images/editors/") for _, path, _ in IMAGES_ON_PAGE}
    assert shown == set(SHOTS), "docs/editors.md and tools/editor_screenshots.py SHOTS disagree"
    assert {p.name for p in IMAGES.iterdir()} == set(SHOTS), "a picture in docs/images/editors/ the page does not show"


@pytest.mark.parametrize("alt, path, caption", IMAGES_ON_PAGE, ids=[p for _, p, _ in IMAGES_ON_PAGE])
def test_each_screenshot_is_a_sound_picture_with_a_caption(alt: str, path: str, caption: str) -> None:
    file = ROOT / "docs" / path
    assert file.is_file(), f"{path} is not committed (run `make e2e` then `make screenshots`)"
    data = file.read_bytes()
    assert 1_000 < len(data) <= MAX_ONE, f"{path}: {len(data)} bytes"
    width, height = png_size(data) if file.suffix == ".png" else svg_size(data)
    assert 200 <= width <= 3000 and 150 <= height <= 2000, f"{path}: {width} x {height}"
    assert alt.strip(), f"{path} has no alt text"
    assert caption.startswith("*") and caption.rstrip().endswith("*"), f"{path}: no caption below it"
    assert "end-to-end run" in " ".join(caption.split()), f"{path}: the caption does not say where it comes from"


def test_the_screenshots_stay_small() -> None:
    total = sum(p.stat().st_size for p in IMAGES.iterdir())
    assert total <= MAX_TOTAL, f"docs/images/editors/ holds {total} bytes"


def test_every_shown_screenshot_is_still_written_by_an_e2e_test() -> None:
    written = _e2e_written_names()
    assert "vscode-problems.png" in written  # the scan sees inside the VS Code session script
    missing = {name: src for name, src in SHOTS.items() if src not in written}
    assert not missing, f"no end-to-end test writes these any more: {missing}"


def test_the_name_scan_sees_only_live_writes() -> None:
    assert written_names('page.screenshot(path=str(art / "a.png"))\nscreen.save_svg(out / "b.svg", "t")') == {
        "a.png",
        "b.svg",
    }
    assert written_names('# page.screenshot(path=str(art / "a.png"))\nname = "c.png"') == set()


def test_the_picture_checks_refuse_broken_files() -> None:
    with pytest.raises(ValueError):
        png_size(b"GIF89a" + bytes(40))
    good = (IMAGES / "vscode-problems.png").read_bytes()
    with pytest.raises(ValueError, match="truncated"):
        png_size(good[: len(good) // 2])
    with pytest.raises(ValueError, match="not svg"):
        svg_size(b"<html/>")
    with pytest.raises(ValueError, match="outside"):
        svg_size(
            b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><style>@font-face { src: '
            b'url("https://example.org/f.woff2") }</style><text>x</text></svg>'
        )
    with pytest.raises(ValueError, match="empty screen"):
        svg_size(b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><text> </text></svg>')
