"""Hugging Face Trainer / TRL arguments: read wherever they are given (:mod:`.args`, :mod:`.read`)
and checked against what transformers does with them (:mod:`.rules`). Nothing here imports
transformers."""
