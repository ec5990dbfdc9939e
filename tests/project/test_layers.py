"""Imports flow one way: every import in accelconf/ and lsp/ (lazy ones and TYPE_CHECKING ones
included, found with ast) goes to its own layer or a lower one, in the order CONTRIBUTING.md states."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _layers() -> dict[str, int]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    m = re.search(r"tests/project/test_layers\.py` reads this line\):\n(.*?)\.\n", text, re.S)
    assert m, "CONTRIBUTING.md's architecture section no longer states the layer order"
    order = [[name.strip() for name in layer.split(",")] for layer in m.group(1).replace("\n", " ").split("->")]
    return {name: i for i, layer in enumerate(order) for name in layer}


def _unit(module: str) -> str | None:
    """The layer unit of a module: its package under accelconf (or its top module), ``lsp`` for the
    server package, ``None`` for the root package (a lazy table of names, importable from anywhere)."""
    parts = module.split(".")
    if parts[0] == "accelconf_lsp":
        return "lsp"
    if ".".join(parts[1:3]) in MODULE_UNITS:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 and parts[1] != "__version__" else None


# Modules that are a unit of their own, below their package: data modules that import only the bottom
# layer (the recogniser reads the transformers releases data; the trainer package reads the recogniser).
MODULE_UNITS = frozenset({"trainer.releases"})


def _imports() -> list[tuple[str, str, int, str]]:
    """(importing unit, file, line, imported module) for every accelconf import."""
    out = []
    for base, prefix in ((ROOT / "accelconf", "accelconf"), (ROOT / "lsp" / "accelconf_lsp", "accelconf_lsp")):
        for path in sorted(base.rglob("*.py")):
            module = ".".join((prefix, *path.relative_to(base).with_suffix("").parts)).removesuffix(".__init__")
            src = _unit(module)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = (
                        [f"{node.module}.{a.name}" for a in node.names]
                        if node.module == "accelconf"
                        or any(f"{node.module}.{a.name}".removeprefix("accelconf.") in MODULE_UNITS for a in node.names)
                        else [node.module]
                    )
                for name in names:
                    if name.split(".")[0] in ("accelconf", "accelconf_lsp") and src is not None:
                        out.append((src, str(path.relative_to(ROOT)), node.lineno, name))
    return out


def test_every_import_goes_to_its_own_layer_or_below() -> None:
    layer = _layers()
    units = {u for u, *_ in _imports()} | {u for *_, n in _imports() if (u := _unit(n)) is not None}
    unknown = sorted(units - set(layer))
    assert not unknown, f"units missing from CONTRIBUTING.md's layer order: {unknown}"
    upward = [
        f"{path}:{line}: {name}"
        for src, path, line, name in _imports()
        if (dst := _unit(name)) is not None and layer[dst] > layer[src]
    ]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_the_scan_sees_lazy_imports() -> None:
    found = {(path, name) for _, path, _, name in _imports()}
    assert ("accelconf/api.py", "accelconf.kinds") in found  # a lazy import inside validate_any


def test_deepspeed_and_formats_env_import_nothing_that_imports_them_back() -> None:
    by_path: dict[str, set[str]] = {}
    for _, path, _, name in _imports():
        by_path.setdefault(path, set()).add(name)
    assert not any(
        n.startswith("accelconf.accelerate")
        for p, names in by_path.items()
        if p.startswith("accelconf/deepspeed/")
        for n in names
    )
    assert "accelconf.deepspeed.validate" not in by_path.get("accelconf/deepspeed/rules.py", set())
    assert "accelconf.formats.kwargs" not in by_path.get("accelconf/formats/env.py", set())
    assert not any(n.startswith("accelconf.commands") for n in by_path.get("lsp/accelconf_lsp/__main__.py", set()))
