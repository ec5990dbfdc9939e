"""accelconf: check, compare and convert Hugging Face Accelerate, FSDP and DeepSpeed configs."""

from __future__ import annotations

__version__ = "0.1.0"
