"""A JavaScript page -> the HTML it renders to, by the system's headless Chromium.

Used only for a page whose HTML is an empty shell (``--render auto``, the default) or for
every page (``--render always``). The browser is the one the system has (``$COGITAVE_CHROMIUM``,
else ``chromium``/``chromium-browser``/``google-chrome`` on the ``PATH``, else
``/usr/bin/chromium``): nothing is downloaded. It runs with a fresh temporary profile, no
extensions, no first-run or background networking, a virtual time budget for the scripts to
settle and a wall-clock timeout; its DOM is read from standard output, bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

RENDER_MODES = ("auto", "never", "always")
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
RENDER_TIMEOUT = 30.0
"""Seconds one page may take to render."""
VIRTUAL_TIME_MS = 5000
"""Milliseconds of virtual time the page's scripts get before the DOM is read."""
MAX_DOM_BYTES = 20 * 1024 * 1024


def find_browser() -> str | None:
    """The path of the system's Chromium, or None."""
    given = os.environ.get("COGITAVE_CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class RenderError(Exception):
    """The browser did not give a DOM (its reason in the message)."""


async def render(browser: str, url: str, user_agent: str) -> str:
    """The DOM of ``url`` after its scripts ran, as HTML."""
    with tempfile.TemporaryDirectory(prefix="cogitave-chromium-") as profile:
        args = [
            browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update",
            "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
            f"--user-data-dir={Path(profile)}", f"--user-agent={user_agent}",
            f"--virtual-time-budget={VIRTUAL_TIME_MS}", "--dump-dom", url,
        ]  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            out = await asyncio.wait_for(_read(proc), timeout=RENDER_TIMEOUT)
        except TimeoutError:
            raise RenderError(f"the browser took more than {RENDER_TIMEOUT:g} s") from None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
    if not out.strip():
        raise RenderError("the browser gave no DOM")
    return out.decode("utf-8", "replace")


async def _read(proc: asyncio.subprocess.Process) -> bytes:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while chunk := await proc.stdout.read(1 << 16):
        size += len(chunk)
        if size > MAX_DOM_BYTES:
            raise RenderError(f"the rendered page is larger than {MAX_DOM_BYTES:,} bytes")
        chunks.append(chunk)
    await proc.wait()
    return b"".join(chunks)
