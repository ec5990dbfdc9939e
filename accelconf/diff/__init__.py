"""Semantic diff: what two configs mean differently for one accelerate version.

This module owns comparing two :class:`~accelconf.accelerate.model.Config` values (:func:`diff`), two
DeepSpeed JSON documents (:func:`diff_deepspeed`) and an accelerate config against a DeepSpeed
JSON file on the settings they share (:func:`diff_accelerate_deepspeed`). Reading files is left to
:mod:`accelconf.formats`, spellings to :func:`accelconf.accelerate.model.canonical`, and printing
to :mod:`accelconf.commands.diff`.

The package by module: :mod:`~accelconf.diff.result` (Change, DiffResult), :mod:`~accelconf.diff.accelerate`
(two Configs' settings), :mod:`~accelconf.diff.configs` (two Configs with the DeepSpeed files they
name), :mod:`~accelconf.diff.deepspeed` (DeepSpeed JSON), :mod:`~accelconf.diff.consequences`
(notes on memory, speed, precision, batch size) and :mod:`~accelconf.diff.files` (reading two inputs).
This ``__init__`` only re-exports.

What "the same meaning" is here, for the version asked (``--accelerate-version``, else the
installed accelerate, else the newest known):

* key order, quoting and comments never matter; legacy spellings (``fp16: true``, top-level
  ``dynamo_backend``, unprefixed ``fsdp_config`` keys, ``fsdp_sharding_strategy: 1``, enum case)
  are compared in their canonical spelling;
* an absent key takes the value ``accelerate launch`` gives it: the launch flag default, or,
  where the launcher exports nothing, the plugin default (registry ``launcher_default``, then
  ``plugin_default``). This models the path a config file takes through ``accelerate launch``,
  not a bare ``python train.py``, where several FSDP defaults differ;
* a key that has no effect in that version (unknown to it, never exported, ignored in a file, not
  read by the FSDP version in use, or in a section neither side uses, such as ``fsdp_config``
  under ``distributed_type: MULTI_GPU``) is listed in ``DiffResult.ignored``, not as a change;
* FSDP1 ``fsdp_sharding_strategy`` and FSDP2 ``fsdp_reshard_after_forward`` are one setting seen
  through two versions: FULL_SHARD corresponds to ``true``, SHARD_GRAD_OP to ``false``
  (``accelerate to-fsdp2``); other pairs are one change that shows both spellings;
* a config that runs DeepSpeed with a ``deepspeed_config_file`` means what that file says: the
  settings the file fixes come from it (found as validate finds it), the keys without an accelerate
  key are compared in DeepSpeed's spelling when both sides have a DeepSpeed JSON, and the file's
  name is no difference (unless a side's file cannot be read);
* a setting one side's format cannot express (an env set has no ``num_processes``) is a
  ``not_comparable`` entry, which does not make the configs different.

Line numbers in :class:`Change` are 1-based; 0 means the value did not come from a line
(a default, an env var, a flag).
"""

from __future__ import annotations

from accelconf.diff.accelerate import effective_default
from accelconf.diff.configs import diff
from accelconf.diff.consequences import batch_note, consequences
from accelconf.diff.deepspeed import (
    DS_TO_ACCELERATE,
    SHARED_WITH_DEEPSPEED,
    deepspeed_config,
    deepspeed_to_accelerate,
    diff_accelerate_deepspeed,
    diff_deepspeed,
    ds_defaults,
    flatten_deepspeed,
)
from accelconf.diff.files import Side, diff_files, diff_sides, read_side
from accelconf.diff.result import KINDS, Change, ChangeKind, DiffResult, Note, SideRef
from accelconf.kinds import is_deepspeed_data  # the one recogniser's answer, re-exported for diff's users

__all__ = [
    "Change",
    "ChangeKind",
    "DS_TO_ACCELERATE",
    "DiffResult",
    "KINDS",
    "Note",
    "SHARED_WITH_DEEPSPEED",
    "Side",
    "SideRef",
    "batch_note",
    "consequences",
    "deepspeed_config",
    "deepspeed_to_accelerate",
    "diff",
    "diff_accelerate_deepspeed",
    "diff_deepspeed",
    "diff_files",
    "diff_sides",
    "ds_defaults",
    "effective_default",
    "flatten_deepspeed",
    "is_deepspeed_data",
    "read_side",
]
