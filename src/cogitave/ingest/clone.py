"""A git repository -> a shallow checkout in the cache, its commit and tag.

The repository is untrusted: git runs here with no system or global config, no hooks, no
fsmonitor, symlinks checked out as plain files, no submodules, no prompts, and the ``ext``
transport off; a clone never runs anything the repository asks for. The checkout lives in
the cache (``$COGITAVE_CACHE``, else ``$XDG_CACHE_HOME/cogitave``, else
``~/.cache/cogitave``) under ``git/<hash of the URL>``, so a re-sync fetches only what
changed (``git fetch --depth 1``) and the files the docs reader sees are those of the new
commit; the reader reads them confined to the checkout
(:class:`~cogitave.ingest.confined.TreeReader`). Each git command has a timeout.

The version of a checkout defaults to its tag: the ref asked for when it is a tag, else a
tag of the remote that names the fetched commit (``git ls-remote``), recorded in the clone
so that :mod:`~cogitave.ingest.gitrepo` reads it like any other.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cogitave.errors import IngestError, InputError
from cogitave.ingest.remote import GitSource, file_url

GIT = os.environ.get("COGITAVE_GIT", "git")
GIT_TIMEOUT = 600.0
"""Seconds one git command may take (a clone of a large repository)."""
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.symlinks=false",
    "core.protectNTFS=true", "core.protectHFS=true", "protocol.ext.allow=never",
    "protocol.file.allow=always", "submodule.recurse=false", "advice.detachedHead=false",
    "init.defaultBranch=main", "transfer.fsckObjects=true", "gc.auto=0",
    # a remote may not send git elsewhere (a private address) by an HTTP redirect: a moved
    # repository is given by its new URL
    "http.followRedirects=false",
)  # fmt: skip
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class Checkout:
    """A repository checked out: the docs folder to read, the commit, its tag."""

    path: Path
    root: Path
    commit: str
    tag: str | None


def cache_dir() -> Path:
    """Where fetched sources are kept between syncs."""
    given = os.environ.get("COGITAVE_CACHE")
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "cogitave"


def checkout(source: GitSource, cache: Path | None = None) -> Checkout:
    """Fetch ``source`` (shallow) into the cache and check it out; the folder to read is
    its ``#SUBDIR`` when given, else the checkout (the docs root is found as for a folder)."""
    if shutil.which(GIT) is None:
        raise InputError("indexing a git repository needs git (not found on the PATH)")
    key = hashlib.sha256(source.url.encode("utf-8")).hexdigest()[:20]
    work = (cache or cache_dir()) / "git" / key
    if not (work / ".git").is_dir():
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        _git(work, "init", "-q")
    ref = source.ref or "HEAD"
    _git(work, "fetch", "-q", "--depth", "1", "--no-tags", "--", source.url, ref,
         what=f"fetch {source}")  # fmt: skip
    _git(work, "checkout", "-q", "--force", "--detach", "FETCH_HEAD")
    _git(work, "clean", "-q", "-d", "-f", "-x")
    commit = _git(work, "rev-parse", "HEAD").strip()
    tag = _tag_of(work, source, commit)
    for old in _git(work, "tag", "--list").split():
        if old != tag:
            _git(work, "tag", "-d", old)
    if tag is not None:
        _git(work, "tag", "-f", tag, commit)
    path = work
    if source.subdir:
        path = work / source.subdir
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(Path(os.path.realpath(work))):
            raise InputError(f"{source}: #{source.subdir} leaves the repository")
        if not real.is_dir():
            raise IngestError(f"{source}: no folder {source.subdir} at {commit[:12]}")
    return Checkout(path, work, commit, tag)


def web_folder(source: GitSource, got: Checkout, folder: Path | None = None) -> str | None:
    """Where the web view of ``source``'s repository shows the files of ``folder`` (None:
    the folder checked out to be read) at the commit checked out, ending in ``/``; None
    when its host has no web view :func:`~cogitave.ingest.remote.file_url` knows."""
    rel = os.path.relpath(folder or got.path, got.root)
    if rel.startswith(".."):
        return None
    return file_url(source.url, got.commit, "" if rel == "." else rel.replace(os.sep, "/") + "/")


MAX_TAGS = 100_000
"""Tags of one remote read by :func:`remote_tags`; more are not listed."""


def remote_tags(url: str, cache: Path | None = None) -> list[str]:
    """The tag names of the repository at ``url`` (``git ls-remote --tags``, run as every git
    command here is), peeled duplicates dropped; an :class:`IngestError` when git cannot
    list them."""
    if shutil.which(GIT) is None:
        raise InputError("listing a repository's tags needs git (not found on the PATH)")
    work = (cache or cache_dir()) / "git" / "ls-remote"
    work.mkdir(parents=True, exist_ok=True)
    listed = _git(work, "ls-remote", "--tags", "--", url, what=f"list tags of {url}")
    tags: list[str] = []
    for line in listed.splitlines()[:MAX_TAGS]:
        _, _, name = line.partition("\t")
        if name.startswith("refs/tags/") and not name.endswith("^{}"):
            tags.append(name.removeprefix("refs/tags/"))
    return tags


def _tag_of(work: Path, source: GitSource, commit: str) -> str | None:
    """The tag naming ``commit``: the ref asked for when it is one, else one of the remote's
    (the highest by name when several)."""
    ref = source.ref
    if ref and _SHA.match(ref):
        ref = None
    try:
        listed = _git(work, "ls-remote", "--tags", "--", source.url, what=f"list tags of {source}")
    except IngestError:
        return ref.removeprefix("refs/tags/") if ref and ref.startswith("refs/tags/") else None
    tags: dict[str, str] = {}  # tag -> commit (peeled)
    for line in listed.splitlines():
        sha, _, name = line.partition("\t")
        if not name.startswith("refs/tags/"):
            continue
        name = name.removeprefix("refs/tags/")
        peeled = name.endswith("^{}")
        name = name.removesuffix("^{}")
        if peeled or name not in tags:
            tags[name] = sha
    if ref is not None:
        name = ref.removeprefix("refs/tags/")
        if tags.get(name) == commit:
            return name
    naming = sorted(t for t, sha in tags.items() if sha == commit)
    return naming[-1] if naming else None


def _git(work: Path, *args: str, what: str = "") -> str:
    """Run git in ``work`` with the safe configuration; its output, or an IngestError with
    its first error line."""
    config = [x for c in _SAFE_CONFIG for x in ("-c", c)]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_ALLOW_PROTOCOL": "http:https:ssh:git:file",
        "LC_ALL": "C",
    }
    for var in ("SSH_AUTH_SOCK", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy",
                "http_proxy", "no_proxy", "GIT_SSH_COMMAND"):  # fmt: skip
        if var in os.environ:
            env[var] = os.environ[var]
    try:
        proc = subprocess.run(
            [GIT, *config, *args],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise IngestError(f"git {what or args[0]}: no answer in {GIT_TIMEOUT:g} s") from None
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.splitlines() if x.strip()]
        errors = [x for x in lines if x.startswith(("fatal:", "error:"))] or lines or [""]
        raise IngestError(f"git {what or args[0]} failed: {errors[0].strip() or proc.returncode}")
    return proc.stdout
