"""The DeepSpeed key table's lookups: paths through aliases, the table's own spelling of a path,
every entry in order, the blocks DeepSpeed removed, and the installed release read from metadata."""

from __future__ import annotations

import pytest

from accelconf.deepspeed import keys as K


@pytest.mark.parametrize(
    "path, canonical",
    [
        ("zero_optimization.stage", "zero_optimization.stage"),
        # an alias is the key it stands for
        ("zero_optimization.prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size"),
        # a deprecated scalar of the same type is its replacement
        (
            "zero_optimization.stage3_gather_fp16_weights_on_model_save",
            "zero_optimization.stage3_gather_16bit_weights_on_model_save",
        ),
        # ... but not one whose replacement is a block (cpu_offload: a boolean for a section)
        ("zero_optimization.cpu_offload", "zero_optimization.cpu_offload"),
        ("bfloat16", "bfloat16"),  # a deprecated block keeps its own name: its keys are its own
        ("bfloat16.enabled", "bfloat16.enabled"),
        # unknown parts are kept, and so is everything under them or under a scalar
        ("zero_optimization.no_such_key.stage", "zero_optimization.no_such_key.stage"),
        ("zero_optimization.no_such_key.offload_param.device", "zero_optimization.no_such_key.offload_param.device"),
        ("train_batch_size.a.prefetch_bucket_size", "train_batch_size.a.prefetch_bucket_size"),
        ("no_such.prefetch_bucket_size", "no_such.prefetch_bucket_size"),
        ("train_batch_size.prefetch_bucket_size", "train_batch_size.prefetch_bucket_size"),
    ],
)
def test_the_tables_own_spelling_of_a_path(path: str, canonical: str) -> None:
    assert K.canonical_path(path) == canonical


def test_lookup_follows_aliases_and_stops_at_scalars() -> None:
    stage3 = K.lookup("zero_optimization.stage3_prefetch_bucket_size")
    assert stage3 is not None and stage3.type == "integer"
    assert K.lookup("zero_optimization.prefetch_bucket_size") is stage3
    assert K.lookup(("zero_optimization", "prefetch_bucket_size")) is stage3
    assert K.lookup("zero_optimization") is K.TOP.children["zero_optimization"]
    assert K.lookup("train_batch_size.x") is None and K.lookup("nope") is None and K.lookup("nope.x") is None
    assert K.lookup(()) is K.TOP


def test_every_entry_in_table_order_depth_first() -> None:
    paths = [p for p, _ in K.iter_keys()]
    assert paths[0] == "train_batch_size" and len(paths) == len(set(paths))
    z = paths.index("zero_optimization")
    assert paths[z + 1].startswith("zero_optimization.")  # its keys come right after it
    assert dict(K.iter_keys())["zero_optimization.offload_optimizer.device"] is K.lookup(
        "zero_optimization.offload_optimizer.device"
    )

    def count(k: K.Key) -> int:
        return sum(1 + count(c) for c in (k.children or {}).values())

    assert len(paths) == count(K.TOP)
    offload = K.lookup("zero_optimization.offload_param")
    assert offload is not None
    assert [p for p, _ in K.iter_keys(offload, "x.")] == [f"x.{n}" for n in offload.children or {}]
    assert list(K.iter_keys(K.lookup("train_batch_size"))) == []  # a scalar has none


@pytest.mark.parametrize("name, version", sorted((n, v) for n, (v, _) in K._REMOVED_TOP.items()))
def test_the_blocks_deepspeed_removed(name: str, version: str) -> None:
    k = K.lookup(name)
    assert k is not None and K.TOP.children[name] is k
    assert (k.removed, k.removed_message) == (version, K._REMOVED_TOP[name][1])
    assert k.open and k.children is None and k.default is K._UNSET and k.doc.endswith(".")
    both = {"sparse_gradients", "graph_harvesting"}  # a boolean switched them on too
    assert k.type == (("boolean", "object") if name in both else "object")
    assert k.replaced_by == (
        "data_efficiency.data_sampling.curriculum_learning" if name == "curriculum_learning" else None
    )
    # the replacement's block is in the table (its inside is open: DeepSpeed's data efficiency library)
    assert k.replaced_by is None or K.lookup(k.replaced_by.split(".")[0]) is not None


@pytest.mark.parametrize(
    "metadata, version", [("0.19.8+cu121", "0.19.8"), ("0.18.0", "0.18.0"), (None, None), ("", None)]
)
def test_the_installed_release_without_its_local_part(monkeypatch, metadata, version) -> None:
    asked = []
    monkeypatch.setattr(K, "_installed", lambda name: asked.append(name) or metadata)
    assert K.installed_version() == version and asked == ["deepspeed"]


def test_sections_are_objects_and_only_scalars_are_lax() -> None:
    """A section is a JSON object (the schema and the type check say so); lax-mode coercion is a
    scalar's, never a section's, and an open section (a free mapping) is never lax either."""
    entries = dict(K.iter_keys())
    sections = {p: k for p, k in entries.items() if k.children is not None}
    assert sections and all(k.type == "object" for k in sections.values())
    assert not [p for p, k in sections.items() if k.lax]
    assert not [p for p, k in entries.items() if k.open and k.lax]
    assert any(k.lax for k in entries.values())  # pydantic's sections have lax scalars
    zero = K.lookup("zero_optimization")
    assert zero is not None and zero.type == "object"
