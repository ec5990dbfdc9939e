"""The public API: a sorted ``__all__`` whose every name resolves, and the doctests of docs/api.md."""

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
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, accelconf; print(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('ruamel', 'jsonschema', 'torch', 'accelerate', 'pygls')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_validate_accepts_path_text_and_document(tmp_path):
    text = "distributed_type: multi_gpu\nnum_processes: 2\n"
    p = tmp_path / "c.yaml"
    p.write_text(text)
    a = accelconf.validate_config(str(p))
    b = accelconf.validate_config(text)
    c = accelconf.validate_config(accelconf.loads(text))
    assert [f.rule for f in a] == [f.rule for f in b] == [f.rule for f in c] == ["enum-case"]


def test_api_page_python_examples_run_as_doctests():
    from pathlib import Path

    readme = Path(__file__).resolve().parents[3] / "docs" / "api.md"
    text = readme.read_text(encoding="utf-8")
    section = text[text.index("# Python API") :]
    section = section[: section.index("\n# ", 5)] if "\n# " in section[5:] else section
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) >= 5
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    shared: dict = {}  # the blocks read as one session, as the page reads
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, shared, f"api.md-python-{i}", str(readme), 0)
        test.globs = shared
        runner.run(test, clear_globs=False)
    assert runner.failures == 0 and runner.tries >= 10
