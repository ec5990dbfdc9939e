"""The bitsandbytes release the QLoRA byte counts are checked against (4-bit and 8-bit quantisation
run on CPU since 0.45), installed under the venv like the other oracle releases:
``python tests/oracle/bitsandbytes_release.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.oracle.release_cache import ReleaseCache  # noqa: E402

CACHE = ReleaseCache("bitsandbytes", {"0.50": "0.50.2"})

if __name__ == "__main__":
    CACHE.main(sys.argv[1:])
