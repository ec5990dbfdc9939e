"""Notes of the conversions (``to-env``, ``to-cli``, ``to-kwargs``, ``to-yaml``, ``explain``) and the
findings of reading env files, launch commands and Python kwargs (:mod:`accelconf.formats`,
:mod:`accelconf.accelerate.launch`)."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule, Severity

SH = "accelerate launch --num_processes 2 --multi_gpu --mixed_precision {} train.py\n"
PY = 'from accelerate import Accelerator\n\naccelerator = Accelerator({}="bf16")\n'


def C(id: str, severity: Severity, summary: str, why: str = "") -> Rule:
    return Rule(id, "convert", severity, summary, why or "Said so that a conversion never drops a setting silently.")


def L(id: str, severity: Severity, summary: str, why: str = "", *examples: Example) -> Rule:
    return Rule(id, "launch", severity, summary, why, False, examples)


RULES: tuple[Rule, ...] = (
    C("convert.default", "info", "a value the input does not give, taken as accelerate's default"),
    C("convert.file-ignored", "info", "a setting accelerate ignores in a config file; not written as a flag"),
    C("convert.incomplete", "info", "the input does not say how many processes"),
    C("convert.input", "info", "something odd found while reading the input"),
    C("convert.lossy", "warning", "a setting the target format cannot express (dropped or changed)"),
    C("convert.machine-dependent", "info", "a value accelerate takes from the machine it runs on (device count...)"),
    C("convert.no-flag", "warning", "a setting with no `accelerate launch` flag; dropped"),
    C("convert.preflight", "warning", "a config whose launch preflight cannot reproduce"),
    C("convert.ranks", "info", "--all-ranks on a single-node configuration"),
    C("convert.unknown", "warning", "a setting accelerate does not know; kept as written"),
    C("convert.version", "warning", "a flag the targeted accelerate release does not have"),
    C("convert.ds-unmapped", "info", "a DeepSpeed key with no accelerate setting"),
    C("convert.ds-not-exported", "info", "a DeepSpeed key accelerate never passes on"),
    C("convert.ds-auto", "info", "a DeepSpeed value left to accelerate's default"),
    C("convert.ds-default-stage", "info", "no zero_optimization: the accelerate plugin defaults to ZeRO stage 2"),
    C("convert.ds-precision-conflict", "info", "fp16 and bf16 both enabled: mixed_precision left unset"),
    L("launch.cwd", "info", "PYTHONPATH is the directory accelerate launch runs in"),
    L("launch.dropped", "warning", "a setting not exported on this launcher path"),
    L("launch.file-ignored", "warning", "a setting accelerate ignores in a config file (the flag default wins)"),
    L("launch.lost", "warning", "a setting that never reaches the training process"),
    L("launch.not-env", "info", "the process layout, which env does not carry (accelerate passes it to torchrun)"),
    L("launch.sagemaker", "warning", "a SageMaker launch, which needs AWS credentials too"),
    L("launch.tpu", "info", "a TPU launch, whose XLA variables depend on a TPU being present"),
    L("launch.unknown", "warning", "a setting exported under a name nothing reads"),
    L("launch.unused", "info", "a setting not used with this distributed_type"),
    L("launch.version", "warning", "a setting the targeted accelerate release does not read"),
    L(
        "env.never-read",
        "warning",
        "an ACCELERATE_* variable accelerate never reads",
        "A misspelt or invented variable changes nothing.",
        Example(
            "ACCELERATE_MIXED_PRECISON=bf16\n",
            "ACCELERATE_MIXED_PRECISION=bf16\n",
            "a misspelt variable",
            "warning",
            file="train.env",
        ),
    ),
    L("env.not-read", "warning", "a variable the targeted release does not read"),
    L("env.launcher-only", "info", "a variable only the launcher reads (not the training process)"),
    L("cli.config-file", "info", "--config_file not found: the launch is explained without it"),
    L("cli.not-read", "warning", "a launch flag the targeted release does not read"),
    L("cli.several-launches", "info", "several `accelerate launch` commands in one script"),
    L(
        "cli.unknown-flag",
        "error",
        "a flag `accelerate launch` does not have",
        "accelerate launch refuses it (argparse).",
        Example(
            SH.replace("--mixed_precision", "--mixed_precison").format("bf16"),
            SH.format("bf16"),
            "a misspelt flag",
            "error",
            file="train.sh",
        ),
    ),
    L("cli.bad-value", "error", "a flag with a missing or wrong value", "accelerate launch refuses it (argparse)."),
    L(
        "cli.invalid-choice",
        "error",
        "a flag value outside its choices",
        "accelerate launch refuses it (argparse).",
        Example(SH.format("fp32"), SH.format("bf16"), "a precision accelerate does not have", "error", file="train.sh"),
    ),
    L(
        "kwargs.unknown-name",
        "error",
        "a keyword or plugin field accelerate does not have",
        "Python raises TypeError.",
        Example(
            PY.format("mixed_precison"), PY.format("mixed_precision"), "a misspelt keyword", "error", file="train.py"
        ),
    ),
    L("kwargs.not-read", "warning", "a keyword the targeted release does not read"),
    L("kwargs.no-config-value", "info", "a keyword with no config-file value"),
)
