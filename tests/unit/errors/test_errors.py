"""The one exception tree: what an input error says, with and without a position."""

from __future__ import annotations

from accelconf.errors import AccelconfError, InputError, UsageError


def test_an_input_error_names_the_file_and_the_position_when_known() -> None:
    e = InputError("bad indentation", "c.yaml", 3, 7)
    assert str(e) == "c.yaml:3:7: bad indentation" and e.args == ("bad indentation",)
    assert (e.message, e.path, e.line, e.column) == ("bad indentation", "c.yaml", 3, 7)


def test_an_input_error_without_a_position_names_the_text_it_came_from() -> None:
    e = InputError("not UTF-8")
    assert (e.path, e.line, e.column) == ("<text>", 0, 0)
    assert str(e) == "<text>: not UTF-8"


def test_both_errors_are_accelconf_errors() -> None:
    assert issubclass(InputError, AccelconfError) and issubclass(UsageError, AccelconfError)
    assert not issubclass(UsageError, InputError)
