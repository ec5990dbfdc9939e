"""The context DeepSpeed's rules write findings to: where a finding lands, and which keys a release has."""

from __future__ import annotations

from packaging.version import Version

from accelconf.deepspeed.context import Context
from accelconf.findings import Finding
from accelconf.text.document import load_text

TEXT = '{\n  "zero_optimization": {\n    "stage": 3\n  },\n  "train_batch_size": 16\n}\n'


def test_a_finding_at_a_node_spans_that_node() -> None:
    doc = load_text(TEXT, "ds.json")
    ctx = Context(doc, "deepspeed", None)
    ctx.add(
        "ds-range", "error", "stage out of range", "zero_optimization.stage", doc.node("zero_optimization.stage"), "2"
    )
    assert ctx.findings == [
        Finding("ds-range", "error", "stage out of range", "zero_optimization.stage", 3, 14, "2", 3, 15)
    ]


def test_a_finding_with_no_node_goes_to_the_key_or_its_nearest_parent() -> None:
    doc = load_text(TEXT, "ds.json")
    ctx = Context(doc, "deepspeed", None)
    # the key exists: its own span (the key, not the value)
    ctx.add("ds-batch", "warning", "batch", "train_batch_size", None)
    # the key does not: the key of its nearest parent that exists
    ctx.add("ds-nvme-path", "error", "no path", "zero_optimization.offload_param.nvme_path", None, "/local_nvme")
    assert ctx.findings == [
        Finding("ds-batch", "warning", "batch", "train_batch_size", 5, 3, None, 5, 21),
        Finding(
            "ds-nvme-path", "error", "no path", "zero_optimization.offload_param.nvme_path", 2, 3, "/local_nvme", 2, 22
        ),
    ]


def test_a_key_is_active_from_its_first_release_up_to_the_one_that_removed_it() -> None:
    doc = load_text("{}\n", "ds.json")
    at = Context(doc, "deepspeed", Version("0.16.0"))
    assert at.active("0.16.0", None) is True  # the release that added it has it
    assert at.active("0.16.1", None) is False
    assert at.active(None, "0.16.0") is False  # the release that removed it has it no more
    assert at.active("0.15.0", "0.16.1") is True
    assert Context(doc, "deepspeed", None).active("0.16.0", None) is None
