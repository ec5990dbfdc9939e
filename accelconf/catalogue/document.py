"""Rules about a file as a whole, whatever its kind (:mod:`accelconf.api`, the language server)."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule

RULES: tuple[Rule, ...] = (
    Rule(
        "parse-error",
        "document",
        "error",
        "The file does not parse (YAML or JSON syntax).",
        "Nothing can read it; the language server reports where it stops.",
    ),
    Rule(
        "file-kind",
        "document",
        "info",
        "A file of a kind accelconf recognises but does not check (a gpt-neox YAML...).",
        "Says what the file is and which files it references were checked.",
        examples=(
            Example(
                "pipe-parallel-size: 1\nmodel-parallel-size: 1\nnum-layers: 2\nhidden-size: 64\n",
                None,
                "gpt-neox arguments",
                "info",
                file="neox.yml",
            ),
        ),
    ),
    Rule(
        "file-reference",
        "document",
        "warning",
        "A file referenced by another (deepspeed_config_file...) cannot be checked.",
        "It is missing or does not parse from where accelconf runs.",
    ),
)
