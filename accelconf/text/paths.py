"""Where a file named inside another file is looked for: the one rule every reader of a reference
follows (a ``deepspeed_config_file``, a launch script's ``--config_file``, a Trainer's ``deepspeed=``).

accelerate, DeepSpeed and the Trainer open the name as written, relative to the directory the job is
launched in, which accelconf cannot know; a config and the files it names are usually kept together.
So a relative name is looked for beside the file that names it first, then in the current directory.
"""

from __future__ import annotations

import os


def candidates(name: str, referrer: str | None) -> list[str]:
    """The paths ``name`` may stand for, in the order they are tried: beside ``referrer`` (unless it
    has no file name, such as ``<stdin>``), then in the current directory; an absolute name is only
    itself. Relative stays relative (normalised)."""
    if os.path.isabs(name):
        return [name]
    beside = (
        []
        if not referrer or referrer.startswith("<")
        else [os.path.normpath(os.path.join(os.path.dirname(referrer), name))]
    )
    here = os.path.normpath(name)
    return beside + ([here] if here not in beside else [])
