"""Where a ``deepspeed_config_file`` value points: the one resolver (environment checks, memory,
diff and validate all ask it)."""

from __future__ import annotations

import os


def config_file_path(ref: str, config_path: str | None) -> str | None:
    """The DeepSpeed JSON a ``deepspeed_config_file`` value names, or ``None`` when no such file exists.

    accelerate opens the name as written (``HfDeepSpeedConfig``: ``os.path.exists``), so a relative
    name is relative to the directory ``accelerate launch`` runs in, which accelconf cannot know. It
    looks next to the config first (a config and its JSON are usually kept together), then in the
    current directory (the launch directory when accelconf runs where the job is launched). A
    config without a file name (``<stdin>``) has only the current directory. The path is returned
    as the user named the config (relative stays relative).
    """
    if os.path.isabs(ref):
        return ref if os.path.isfile(ref) else None
    candidates = []
    if config_path and not config_path.startswith("<"):
        candidates.append(os.path.normpath(os.path.join(os.path.dirname(config_path), ref)))
    candidates.append(os.path.normpath(ref))
    return next((c for c in candidates if os.path.isfile(c)), None)
