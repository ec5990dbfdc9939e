"""The documentation site in a real browser: built with MkDocs, served on localhost, opened in
headless Chromium through Playwright (the browser and driver the VS Code end-to-end test uses,
installed by tools/install-code-server.sh). Screenshots of the home page, the settings reference and
one more page are kept in build/docs-screenshots/ (ACCELCONF_DOCS_SCREENSHOTS names another folder).

Outside CI the test skips, saying why, when Chromium, Playwright or MkDocs is missing; under CI a
missing one fails (`make test` installs the editors and their browser first there).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.project.test_docs import build_site

ROOT = Path(__file__).resolve().parents[2]

# Run in its own interpreter (as the VS Code session is): a browser that hangs is then killed by the
# subprocess timeout instead of hanging the suite.
SESSION = r"""
import json, pathlib, shutil, sys
from playwright.sync_api import sync_playwright

base, shots, one_page = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
result = {}
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    with page.expect_response(lambda r: r.url.endswith("search/search_index.json"), timeout=30000) as index:
        page.goto(base + "/", wait_until="load")
    result["index_status"] = index.value.status
    result["index_docs"] = len(index.value.json().get("docs", []))
    result["home_title"] = page.title()
    result["home_h1"] = page.locator("article h1").first.inner_text()
    page.screenshot(path=str(shots / "home.png"), full_page=True)
    # Search as a reader does: open the search box, type, wait for results.
    page.keyboard.press("s")  # Material's shortcut to the search box
    page.keyboard.type("fsdp_version", delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=30000)
    result["search_results"] = page.locator(".md-search-result__item").count()
    result["search_links"] = page.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")
    page.screenshot(path=str(shots / "search.png"))
    page.keyboard.press("Escape")

    page.goto(base + "/reference/settings/", wait_until="load")
    result["settings_rows"] = page.locator("article table tbody tr").count()
    page.screenshot(path=str(shots / "settings.png"))
    page.locator("#settings-filter").fill("FSDP_VERSION")
    page.wait_for_timeout(300)
    visible = page.locator("article table tbody tr:visible")
    result["filtered_rows"] = [visible.nth(i).locator("td").first.inner_text() for i in range(visible.count())]
    page.screenshot(path=str(shots / "settings-filtered.png"))

    page.goto(base + "/" + one_page, wait_until="load")
    result["page_h1"] = page.locator("article h1").first.inner_text()
    result["page_code_blocks"] = page.locator("article pre code").count()
    page.screenshot(path=str(shots / "page.png"), full_page=True)
    result["page_errors"] = errors
    browser.close()
print(json.dumps(result))
"""


def _missing() -> str | None:
    if shutil.which("chromium") is None:
        return "no chromium (Debian: apt-get install chromium; tools/install-code-server.sh does)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Python Playwright is not installed (tools/install-code-server.sh installs it)"
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def served_site(tmp_path: Path) -> Iterator[str]:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the docs browser test needs its browser in CI: {reason}")
        print(reason)
        pytest.skip(reason)
    site = tmp_path / "site"
    r = build_site(site)
    assert r.returncode == 0, r.stderr[-3000:]
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_site_in_chromium_searches_and_renders_the_settings_table(served_site: str) -> None:
    from accelconf.accelerate import registry

    shots = Path(os.environ.get("ACCELCONF_DOCS_SCREENSHOTS", ROOT / "build" / "docs-screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    # one rule page where the checkout has the rule catalogue's pages, else a page of examples
    rule = ROOT / "docs" / "rules" / "yaml-bool-value.md"
    one_page, title = (
        ("rules/yaml-bool-value/", "yaml-bool-value") if rule.exists() else ("check/", "Checking against a machine")
    )
    r = subprocess.run(
        [sys.executable, "-c", SESSION, served_site, str(shots), one_page], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["index_status"] == 200 and result["index_docs"] > 50, result
    assert result["home_h1"].startswith("accelconf"), result
    assert result["search_results"] > 0, result
    assert any("/reference/settings/" in link for link in result["search_links"]), result
    assert result["settings_rows"] == len(registry.SETTINGS), result
    assert result["filtered_rows"] == ["fsdp_version"], result
    assert result["page_h1"].startswith(title) and result["page_code_blocks"] >= 2, result
    assert not result["page_errors"], result["page_errors"]
    for name in ("home.png", "search.png", "settings.png", "settings-filtered.png", "page.png"):
        assert (shots / name).stat().st_size > 10_000, name
