"""``python -m accelconf.preflight CONFIG``: one rank, under the job's own launcher.

``accelerate launch --config_file CONFIG -m accelconf.preflight CONFIG``, ``torchrun ... -m
accelconf.preflight CONFIG``: started exactly as training will be. Exit 0 clean, 1 findings (or
a step that hung), 2 an unreadable config or bad arguments.
"""

from __future__ import annotations

import argparse
import sys

from accelconf.errors import AccelconfError
from accelconf.preflight.layout import add_options
from accelconf.preflight.rank import run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m accelconf.preflight",
        description="One rank of accelconf preflight, started by the job's launcher.",
    )
    add_options(p)
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    try:
        return run(args)
    except AccelconfError as exc:
        print(f"accelconf preflight: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
