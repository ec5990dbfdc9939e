"""Rules about a file as a whole, whatever its kind (:mod:`accelconf.api`, the language server)."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule

RULES: tuple[Rule, ...] = (
    Rule("parse-error", "document", "error", "The file does not parse (YAML or JSON syntax).",
         "Nothing can read it; the language server reports where it stops."),
    Rule("file-kind", "document", "info", "A file of a kind accelconf recognises but does not check (Trainer arguments...).",
         "Says what the file is and which files it references were checked.",
         examples=(Example("model_name_or_path: gpt2\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 2\n"
                           "deepspeed: ds.json\nbf16: true\n", None, "Trainer arguments", "info", file="train_args.yaml"),)),
    Rule("file-reference", "document", "warning", "A file referenced by another (deepspeed_config_file...) cannot be checked.",
         "It is missing or does not parse from where accelconf runs."),
)
