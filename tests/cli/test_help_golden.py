"""Every command's ``--help``, word for word, against the reviewed record
``tests/data/cli/help.golden`` (``tests/golden.py``): options, metavars, choices, defaults, examples
and exit codes are what users read first, and a changed or lost one is a changed interface. Printed
100 columns wide, the package folder written ``<accelconf>``. After a deliberate change,
``ACCELCONF_UPDATE_EXPECTED=1`` rewrites the record; read the diff before committing."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

import accelconf
from accelconf.cli import COMMANDS, main
from tests import golden
from tests.conftest import DATA

GOLDEN = DATA / "cli" / "help.golden"
TITLES = ["accelconf", *COMMANDS]


def _section(title: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--help"] if title == "accelconf" else [title, "--help"])
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    assert (code, err.getvalue()) == (0, ""), title
    # the installed package's folder (check names its profiles there) differs between machines
    text = out.getvalue().replace(os.path.dirname(accelconf.__file__), "<accelconf>")
    return [f"== {title} @ help", *text.rstrip("\n").split("\n")]


if golden.update_requested():  # rewrite the record once, before the tests read it
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    golden.write(GOLDEN, (_section(t) for t in TITLES))


@pytest.mark.parametrize("title", TITLES)
def test_help_is_the_reviewed_record(title: str) -> None:
    golden.check(GOLDEN, title, _section(title), "--help")


def test_the_record_holds_every_command_once() -> None:
    assert list(golden.sections(GOLDEN)) == TITLES
