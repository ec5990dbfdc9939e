"""MkDocs hook (mkdocs.yml `hooks:`): the site's pages for README.md, CONTRIBUTING.md and
CHANGELOG.md, made at build time from the files themselves so that they are never a stale copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_pages  # noqa: E402


def on_files(files: Files, config: Any) -> Files:
    for page in docs_pages.SITE_COPIES:
        files.append(File.generated(config, page, content=docs_pages.site_copy(docs_pages.SITE_COPIES[page])))
    return files


def on_config(config: Any) -> Any:
    """Pages that exist only where the tables behind them do join the nav. One page per rule
    (docs/rules/, written by tools/docs_pages.py from the rule catalogue) joins the
    nav under "Rules", so that no page is left out of it however many rules there are."""
    rules = sorted(p.name for p in (Path(config["docs_dir"]) / "rules").glob("*.md"))
    if rules and config["nav"] is not None:
        pages: list[Any] = ["rules/index.md"] * ("index.md" in rules)
        pages += [{name.removesuffix(".md"): f"rules/{name}"} for name in rules if name != "index.md"]  # titled by id
        config["nav"].append({"Rules": pages})
    if (Path(config["docs_dir"]) / "reference" / "memory.md").exists() and config["nav"] is not None:
        for item in config["nav"]:  # the memory chart, rendered where `accelconf fit` exists
            if isinstance(item, dict) and "Reference" in item:
                item["Reference"].append({"Memory strategies": "reference/memory.md"})
    return config
