"""A JavaScript page -> the HTML it renders to, by the system's headless Chromium, confined.

Used only for a page whose HTML is an empty shell (``--render auto``, the default) or for
every page (``--render always``). The browser is the one the system has (``$COGITAVE_CHROMIUM``,
else ``chromium``/``chromium-browser``/``google-chrome`` on the ``PATH``, else
``/usr/bin/chromium``): nothing is downloaded. It runs with a fresh temporary profile, no
extensions, no first-run or background networking, a virtual time budget for the scripts to
settle and a wall-clock timeout; its DOM is read from standard output, bounded.

Every request the browser makes (the page, each redirect, subresources, ``fetch``/XHR,
workers, WebSockets) goes through a :class:`~cogitave.ingest.web.proxy.FilteringProxy` that
asks the caller's ``allow`` first; loopback is not exempt. The browser's other ways out are
shut: its host name resolution fails for every name (so nothing can go around the proxy),
QUIC is off and WebRTC may not send UDP outside the proxy (a flag and a profile preference).
A page that ends on a refused request (a redirect, a script navigating away) or on the
browser's own error page is not rendered (:class:`RenderError`).

The browser runs in its sandbox where the platform allows it: run as root, Chromium refuses
its sandbox, so it runs as the unprivileged ``nobody`` instead; when the sandbox does not start
(no user namespaces, say) it runs with ``--no-sandbox``. :func:`launch_mode` decides once per
browser, by starting it on an inline page; :attr:`Rendered.sandboxed` says which it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import pwd
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cogitave.ingest.web.proxy import Allow, FilteringProxy, Refusal

RENDER_MODES = ("auto", "never", "always")
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
RENDER_TIMEOUT = 30.0
"""Seconds one page may take to render."""
VIRTUAL_TIME_MS = 5000
"""Milliseconds of virtual time the page's scripts get before the DOM is read."""
MAX_DOM_BYTES = 20 * 1024 * 1024
PROBE_PAGE = "data:text/html,<p>cogitave-probe</p>"
UNPRIVILEGED = "nobody"
"""The user the browser runs as when we are root (so that its sandbox can start)."""

_ERROR_PAGE = re.compile(rb"<body[^>]*\bclass=\"neterror\b")


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


@dataclass(frozen=True)
class Launch:
    """How the browser is started: sandboxed or not, and as which user (None: ours)."""

    sandboxed: bool
    user: int | None = None
    group: int | None = None


@dataclass(frozen=True)
class Rendered:
    """A rendered page: its DOM as HTML, the requests the browser made that ``allow``
    refused (the first :data:`~cogitave.ingest.web.proxy.MAX_LISTED`; ``refusals`` counts
    them all), the requests forwarded, and whether the browser ran in its sandbox."""

    html: str
    refused: tuple[Refusal, ...]
    refusals: int
    forwarded: int
    sandboxed: bool


def browser_args(browser: str, profile: str, proxy: str, launch: Launch) -> list[str]:
    """The command line of a headless Chromium whose every request goes through ``proxy``
    (the URL and user agent follow)."""
    return [
        browser, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-sync", "--disable-background-networking",
        "--disable-component-update", "--disable-default-apps", "--disable-domain-reliability",
        "--disable-client-side-phishing-detection", "--disable-breakpad", "--no-pings",
        "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
        # Every request through the proxy, loopback included; no other way out.
        f"--proxy-server={proxy}", "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--disable-quic", "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-features=DnsOverHttps,AsyncDns,MediaRouter,OptimizationHints,Translate,"
        "NetworkTimeServiceQuerying,AutofillServerCommunication",
        *([] if launch.sandboxed else ["--no-sandbox"]),
        f"--user-data-dir={Path(profile)}", f"--virtual-time-budget={VIRTUAL_TIME_MS}",
        "--dump-dom",
    ]  # fmt: skip


_LAUNCH: dict[str, Launch] = {}


async def launch_mode(browser: str) -> Launch:
    """How ``browser`` runs here (decided once per browser): in its sandbox, as ourselves or,
    when we are root, as ``nobody``; else without it, as ourselves."""
    if browser not in _LAUNCH:
        _LAUNCH[browser] = await _decide(browser)
    return _LAUNCH[browser]


async def _decide(browser: str) -> Launch:
    if os.geteuid() != 0:
        candidate = Launch(True)
    else:
        try:
            who = pwd.getpwnam(UNPRIVILEGED)
        except KeyError:
            return Launch(False)
        candidate = Launch(True, who.pw_uid, who.pw_gid)
    try:
        with _profile(candidate) as profile:
            args = browser_args(browser, profile, "http://127.0.0.1:9", candidate)
            out = await _run([*args, PROBE_PAGE], candidate)
    except (RenderError, OSError):
        return Launch(False)
    return candidate if b"cogitave-probe" in out else Launch(False)


PREFERENCES = {"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"}}
"""The profile's preferences: WebRTC sends no UDP outside the proxy (as the flag says)."""


@contextlib.contextmanager
def _profile(launch: Launch) -> Iterator[str]:
    """A fresh profile folder the browser's user owns (removed afterwards), holding only
    :data:`PREFERENCES`."""
    with tempfile.TemporaryDirectory(prefix="cogitave-chromium-") as profile:
        default = Path(profile, "Default")
        default.mkdir()
        (default / "Preferences").write_text(json.dumps(PREFERENCES), encoding="utf-8")
        if launch.user is not None:
            group = launch.group if launch.group is not None else -1
            for path in (profile, default, default / "Preferences"):
                os.chown(path, launch.user, group)
        yield profile


async def render(browser: str, url: str, user_agent: str, *, allow: Allow) -> Rendered:
    """The DOM of ``url`` after its scripts ran, every request of the browser checked with
    ``allow`` first (``url -> None`` when allowed, else the reason; see the module doc)."""
    reason = await asyncio.to_thread(allow, url)
    if reason is not None:
        raise RenderError(f"the page itself is refused ({reason})")
    launch = await launch_mode(browser)
    async with FilteringProxy(allow, page=url) as proxy:
        with _profile(launch) as profile:
            args = browser_args(browser, profile, proxy.url, launch)
            out = await _run([*args, f"--user-agent={user_agent}", url], launch)
    if not out.strip():
        raise RenderError("the browser gave no DOM")
    own = re.search(re.escape(proxy.marker).encode() + rb" (\d+) (\S+)", out)
    if own is not None:  # the page ended on an answer of the proxy's own
        where = html.unescape(own[2].decode("utf-8", "replace"))
        if own[1] == b"403":
            raise RenderError(f"the page went to {where}, which the crawl does not fetch")
        raise RenderError(f"the browser could not load it ({where} failed)")
    if _ERROR_PAGE.search(out):
        code = re.search(rb"\bERR_[A-Z_]+", out)
        why = code[0].decode() if code else "its error page"
        raise RenderError(f"the browser could not load it ({why})")
    return Rendered(
        out.decode("utf-8", "replace"),
        tuple(proxy.refused),
        proxy.refusals,
        proxy.forwarded,
        launch.sandboxed,
    )


async def _run(args: list[str], launch: Launch) -> bytes:
    """The standard output of the browser run with ``args``, bounded in size and time."""
    # Its home is its profile: whatever it writes (crash reports, a download) goes with it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = next(a for a in args if a.startswith("--user-data-dir="))[16:]
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        user=launch.user,
        group=launch.group,
        extra_groups=[] if launch.user is not None else None,
        start_new_session=True,
    )
    try:
        return await asyncio.wait_for(_read(proc), timeout=RENDER_TIMEOUT)
    except TimeoutError:
        raise RenderError(f"the browser took more than {RENDER_TIMEOUT:g} s") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, 9)
            await proc.wait()


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
