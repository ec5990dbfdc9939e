"""Which format a text is read as, when no --from is given: the file name first, then the content."""

from __future__ import annotations

import pytest

from accelconf import formats


@pytest.mark.parametrize(
    "path,fmt",
    [
        ("c.yaml", "yaml"),
        ("c.YML", "yaml"),
        ("c.json", "json"),
        ("launch.env", "env"),
        ("train.py", "kwargs"),
        ("run.sh", "cli"),
        # dotfiles: splitext gives ".env" no suffix, the name still says dotenv
        (".env", "env"),
        ("deploy/.env", "env"),
        ("deploy/..env", "env"),
        ("X.ENV", "env"),
    ],
)
def test_the_file_name_decides_before_the_content(path: str, fmt: str) -> None:
    # the content looks like YAML every time: only the name can give another answer
    assert formats.detect_format("distributed_type: 'NO'\n", path) == fmt


@pytest.mark.parametrize("path", ["", "-", "<stdin>", "<text>", "config", "dir.env/config"])
def test_names_without_a_known_suffix_leave_it_to_the_content(path: str) -> None:
    assert formats.detect_format("ACCELERATE_USE_CPU=true\n", path) == "env"
    assert formats.detect_format('{"num_processes": 2}', path) == "json"


@pytest.mark.parametrize(
    "text,fmt",
    [
        ("", "yaml"),
        ("\n  \n", "yaml"),
        ("# only a comment\n", "yaml"),  # nothing to go on: a config file
        ("accelerate launch --multi_gpu train.py\n", "cli"),
        ("accelerate-launch --cpu t.py\n", "cli"),
        ("accelerate  launch t.py\n", "cli"),
        ("# how we launch\n--num_processes 2 t.py\n", "cli"),
        ("[]\n", "json"),
        ('  {"a": 1}\n', "json"),
        ("acc = Accelerator(mixed_precision='bf16')\n", "kwargs"),
        ("p = FullyShardedDataParallelPlugin(fsdp_version=2)\n", "kwargs"),
        ("import accelerate\n", "kwargs"),
        ("from accelerate.utils import X\n", "kwargs"),
        ("export A=1\nB='2'\n", "env"),
        ("A=1\nnot an assignment\n", "yaml"),
        ("accelerator(mixed_precision='no')\n", "yaml"),
        ("plugin(x=1)\n", "yaml"),
        ("IMPORT ACCELERATE\n", "yaml"),
        ("FROM ACCELERATE\n", "yaml"),
        ("distributed_type: MULTI_GPU\n", "yaml"),
    ],
)
def test_the_content_decides_without_a_name(text: str, fmt: str) -> None:
    assert formats.detect_format(text) == fmt
    assert formats.detect_format(text, "-") == fmt


def test_read_records_the_detected_format() -> None:
    cfg = formats.read("ACCELERATE_MIXED_PRECISION=bf16\n", path="launch.env")
    assert cfg.format == "env" and cfg.get("mixed_precision") == "bf16"
    assert formats.read("mixed_precision: bf16\n").format == "yaml"


def test_an_unknown_format_is_a_usage_error() -> None:
    from accelconf.errors import UsageError

    with pytest.raises(UsageError, match="unknown format 'toml' \\(choose from yaml, json, env, cli, kwargs\\)"):
        formats.write(formats.read("num_processes: 2\n"), "toml")


def test_read_detects_by_name_before_content():
    # JSON text is YAML too: the name says which reader, and the Config remembers it
    assert formats.read('{"num_processes": 2}', path="c.yaml").format == "yaml"
    assert formats.read('{"num_processes": 2}', path="c.json").format == "json"
