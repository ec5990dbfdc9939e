"""Where a ``deepspeed_config_file`` value points: the one resolver (environment checks, memory,
diff and validate all ask it)."""

from __future__ import annotations

import os

from accelconf.text.paths import candidates


def config_file_path(ref: str, config_path: str | None) -> str | None:
    """The DeepSpeed JSON a ``deepspeed_config_file`` value names, or ``None`` when no such file exists.

    accelerate opens the name as written (``HfDeepSpeedConfig``: ``os.path.exists``), so a relative
    name is relative to the directory ``accelerate launch`` runs in, which accelconf cannot know. It
    looks where :func:`accelconf.text.paths.candidates` says: next to the config first, then in the
    current directory (the launch directory when accelconf runs where the job is launched). The
    path is returned as the user named the config (relative stays relative).
    """
    return next((c for c in candidates(ref, config_path) if os.path.isfile(c)), None)
