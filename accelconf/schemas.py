"""Every file under ``schemas/``: accelerate's schemas (one per release), the DeepSpeed schema, the
catalog and the schema of accelconf's own JSON output. Composing :mod:`accelconf.accelerate.schema`,
:mod:`accelconf.deepspeed` and :mod:`accelconf.report` happens here, above all three
(``make schemas`` and ``accelconf schema --write`` write it; a test keeps the committed files equal).
"""

from __future__ import annotations

import os

from accelconf.accelerate import registry, schema
from accelconf.atomic import write_atomic
from accelconf.deepspeed.schema import deepspeed_schema
from accelconf.report import output_schema


def generated_files() -> dict[str, str]:
    """File name under ``schemas/`` -> expected content (schemas, per-version schemas, catalog)."""
    out = {name: schema.dumps(fn()) for name, fn in schema.GENERATED.items()}
    for v in registry.KNOWN_VERSIONS:
        if v != registry.NEWEST:
            out[f"versions/accelerate-config-{v}.schema.json"] = schema.dumps(schema.accelerate_schema(v))
    out["catalog.json"] = schema.dumps(schema.catalog())
    out["deepspeed-config.schema.json"] = schema.dumps(deepspeed_schema())
    out["accelconf-output.schema.json"] = schema.dumps(output_schema(f"{schema.SCHEMA_URN}:accelconf-output"))
    return out


def write_all(directory: str) -> list[str]:
    """Write every generated file under ``directory`` that differs; returns the paths written."""
    written = []
    for name, text in generated_files().items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        except FileNotFoundError:
            pass
        write_atomic(path, text.encode("utf-8"))
        written.append(path)
    return written
