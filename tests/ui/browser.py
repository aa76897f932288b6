"""Headless Chromium driving the console as a user would: Debian's ``chromium`` through
Playwright, a fresh profile, no network but this machine's loopback.

:func:`open_browser` starts it (``$SBATCHK8S_CHROMIUM`` or ``chromium`` on the PATH);
:func:`shoot` saves a page's screenshot and checks the elements that make it that page.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

#: The flags this machine's headless Chromium runs with: no sandbox (containers), no GPU,
#: nothing fetched in the background (updates, sync, QUIC, proxies).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-proxy-server"]
#: How long one expectation on the page may take (a job's whole run fits well inside).
WAIT_MS = 60_000


def chromium_path() -> str:
    """The Chromium to drive; a missing one fails the test with how to install it."""
    path = os.environ.get("SBATCHK8S_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser")
    if not path:
        raise AssertionError("the console's browser tests need Chromium: apt-get install -y "
                             "chromium (or set SBATCHK8S_CHROMIUM to its path)")
    return path


def open_browser(downloads: Path) -> Iterator[Any]:
    """A Playwright browser context on a fresh profile (closed, profile removed, after)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="sbatch-k8s-ui-chromium-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=chromium_path(), headless=True,
                args=CHROMIUM_FLAGS, accept_downloads=True, downloads_path=str(downloads),
                viewport={"width": 1400, "height": 900})
            context.set_default_timeout(WAIT_MS)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def shoot(page: Any, directory: Path, name: str, must_show: Sequence[str]) -> Path:
    """Save ``page``'s screenshot as ``directory/name.png`` after checking that each
    selector in ``must_show`` is visible on it (the page's key elements)."""
    for selector in must_show:
        page.locator(selector).first.wait_for(state="visible")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, (path, len(data))
    return path


#: Records each state the live table gives job ``key`` (installed in the Jobs tab).
WATCH_STATES = """key => {
  window.seenStates = [];
  const look = () => {
    const row = document.querySelector(`#job-rows tr[data-key="${key}"]`);
    const state = row && row.dataset.state;
    if (state && window.seenStates[window.seenStates.length - 1] !== state)
      window.seenStates.push(state);
  };
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true,
                                                     attributes: true});
  look();
}"""


def confirm(page: Any, button: str, yes: bool) -> None:
    """Click an action's button, then the dialog's Confirm (or Keep)."""
    page.click(button)
    page.locator("#confirm").wait_for(state="visible")
    page.click("#confirm-yes" if yes else "#confirm-no")
    page.locator("#confirm").wait_for(state="hidden")


def wait_for_text(page: Any, selector: str, pattern: str, timeout_ms: int = WAIT_MS) -> None:
    """Wait until the element ``selector`` exists and its text matches the regular
    expression ``pattern``."""
    page.wait_for_function(
        "([selector, pattern]) => { const e = document.querySelector(selector);"
        " return e !== null && new RegExp(pattern).test(e.textContent); }",
        arg=[selector, pattern], timeout=timeout_ms)
