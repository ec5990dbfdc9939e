"""The public API: a sorted ``__all__`` whose every name resolves, and the README's doctests."""

from __future__ import annotations

import doctest
import subprocess
import sys

import accelconf


def test_all_is_sorted_and_resolves():
    assert accelconf.__all__ == sorted(accelconf.__all__)
    for name in accelconf.__all__:
        assert getattr(accelconf, name) is not None, name


def test_module_docstring_examples():
    failures, _ = doctest.testmod(accelconf, verbose=False)
    assert failures == 0


def test_import_is_light():
    out = subprocess.run([sys.executable, "-c", "import sys, accelconf; print(sorted(m for m in sys.modules if m.split('.')[0] in ('ruamel', 'jsonschema', 'torch', 'accelerate', 'pygls')))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_validate_accepts_path_text_and_document(tmp_path):
    text = "distributed_type: multi_gpu\nnum_processes: 2\n"
    p = tmp_path / "c.yaml"
    p.write_text(text)
    a = accelconf.validate_config(str(p))
    b = accelconf.validate_config(text)
    c = accelconf.validate_config(accelconf.loads(text))
    assert [f.rule for f in a] == [f.rule for f in b] == [f.rule for f in c] == ["enum-case"]
