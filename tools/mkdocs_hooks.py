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
