"""The release range a hover shows for a setting is the registry's, release for release.

For every setting with a ``since`` or an ``until``, the hover's "Versions" row is read back and
checked against the registry itself: the first release it names has the setting and the one
before does not; the last release it names has the setting and the next one does not. A hover
that names the release that removed a key (or one before it was added) fails here.
"""

from __future__ import annotations

import re

import pytest

from accelconf.accelerate import registry
from accelconf.assist.hover import setting_markdown

KNOWN = registry.KNOWN_VERSIONS
RANGED = [s for s in registry.SETTINGS if s.since or s.until]


def _row(s: registry.Setting) -> str:
    rows = [ln for ln in setting_markdown(s).splitlines() if ln.startswith("- **Versions:** ")]
    assert len(rows) == 1, setting_markdown(s)
    return rows[0].removeprefix("- **Versions:** ")


def _bounds(row: str) -> tuple[str | None, str | None]:
    for pattern, first, last in (
        (r"accelerate (\S+) to (\S+)", 1, 2),
        (r"accelerate up to (\S+)", None, 1),
        (r"accelerate (\S+)\+", 1, None),
    ):
        m = re.fullmatch(pattern, row)
        if m:
            return (m.group(first) if first else None), (m.group(last) if last else None)
    raise AssertionError(f"unexpected versions row: {row!r}")


def test_some_settings_have_a_range() -> None:
    assert any(s.until for s in RANGED) and any(s.since for s in RANGED)


@pytest.mark.parametrize("s", RANGED, ids=lambda s: f"{s.section}.{s.key}" if s.section else s.key)
def test_hover_range_names_the_first_and_last_release_with_the_setting(s: registry.Setting) -> None:
    first, last = _bounds(_row(s))
    if first is not None and first in KNOWN:
        assert s.exists_in(first), (s.key, first)
        i = KNOWN.index(first)
        assert i == 0 or not s.exists_in(KNOWN[i - 1]), (s.key, KNOWN[i - 1])
    if last is not None:
        assert last in KNOWN, (s.key, last)
        assert s.exists_in(last), (s.key, last)
        i = KNOWN.index(last)
        assert i == len(KNOWN) - 1 or not s.exists_in(KNOWN[i + 1]), (s.key, KNOWN[i + 1])
