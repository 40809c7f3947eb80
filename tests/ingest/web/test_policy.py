"""The crawl's fetch policy: what a request may reach by kind (the start page, a page, the
site's own files), no private address from a public start host (every address a name
resolves to), the scheme and length rules, the request budget and the deadline, and the
synchronous ``refusal`` a browser's proxy calls from another thread."""

from __future__ import annotations

import threading

import pytest

from cogitave.ingest.web import policy as policy_module
from cogitave.ingest.web.policy import MAX_URL, FetchPolicy
from cogitave.ingest.web.scope import Scope
from tests.ingest.web.helpers import public

START = "https://docs.example.com/guide/"


def docs_policy(**kw: object) -> FetchPolicy:
    resolve = kw.pop("resolve", public("docs.example.com", "cdn.example.net"))
    return FetchPolicy(START, Scope.of(START), resolve=resolve, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8000/latest/meta-data/iam",
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1/",
        "http://10.1.2.3/x",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://0.0.0.0/",
        "http://metadata.internal/computeMetadata/v1/",  # resolves to a link-local address
        "http://split.example/",  # one public address, one private: refused
    ],
)
def test_a_public_start_never_reaches_a_private_address(url: str) -> None:
    names = {
        "docs.example.com": ["93.184.216.34"],
        "metadata.internal": ["169.254.169.254"],
        "split.example": ["93.184.216.35", "192.168.1.9"],
    }
    p = docs_policy(resolve=lambda h: names.get(h, []))
    assert p.public_start
    for kind in ("start", "page", "site"):
        assert p.check(url, kind, first=False) == "private address"
    assert p.refusal(url) == "private address"


def test_a_private_start_may_stay_private() -> None:
    start = "http://127.0.0.1:8000/docs/"
    p = FetchPolicy(start, Scope.of(start), resolve=lambda h: [])
    assert not p.public_start
    assert p.check("http://127.0.0.1:8000/docs/a/", "page") is None
    assert p.refusal("http://127.0.0.1:8000/robots.txt") is None
    # another port is another site, private or not
    assert p.refusal("http://127.0.0.1:9000/latest/meta-data/iam") == "other site"


def test_what_each_kind_may_reach() -> None:
    p = docs_policy()
    # pages: the scope (the start page's folder)
    assert p.check("https://docs.example.com/guide/install/", "page") is None
    assert p.check("https://docs.example.com/blog/", "page") == "scope"
    # the site's own files: any path of its hosts, no other host
    assert p.check("https://docs.example.com/robots.txt", "site") is None
    assert p.check("https://docs.example.com/other/page.md", "site") is None
    assert p.check("http://docs.example.com/sitemap.xml", "site") is None  # http -> https
    assert p.check("https://cdn.example.net/sitemap.xml", "site") == "other site"
    assert p.check("https://docs.example.com:8443/x", "site") == "other site"
    # the start page: the URL named is allowed; its redirects stay on its host
    assert p.check("https://docs.example.com/", "start", first=True) is None
    assert p.check("https://docs.example.com/3/", "start", first=False) is None
    assert p.check("https://cdn.example.net/", "start", first=False) == "other site"
    given = FetchPolicy(START, Scope.of(START, ["https://cdn.example.net/docs/"]), given=True,
                        resolve=public("docs.example.com", "cdn.example.net"))  # fmt: skip
    assert given.check("https://cdn.example.net/docs/", "start", first=False) is None
    assert given.check("https://cdn.example.net/blog/", "start", first=False) == "scope"
    assert given.hosts() == {"docs.example.com", "cdn.example.net"}
    assert given.check("https://cdn.example.net/robots.txt", "site") is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "scheme"),
        ("ftp://docs.example.com/x", "scheme"),
        ("data:text/html,<p>x</p>", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("gopher://docs.example.com:70/", "scheme"),
        ("http:///no-host", "scheme"),
        ("https://docs.example.com/guide/" + "a" * MAX_URL, "length"),
        ("http://[::1", "scheme"),  # unparseable
    ],
)
def test_scheme_and_length(url: str, why: str) -> None:
    p = docs_policy()
    assert p.check(url, "page", first=False) == why
    assert p.refusal(url) == why


def test_refusals_are_recorded_by_reason_and_refusal_records_nothing() -> None:
    p = docs_policy()
    p.check("https://cdn.example.net/a", "site")
    p.check("http://localhost/iam", "site")
    p.check("https://docs.example.com/blog/", "page")
    p.check("https://docs.example.com/guide/ok/", "page")
    assert p.refused == {
        "other site": ["https://cdn.example.net/a"],
        "private address": ["http://localhost/iam"],
        "scope": ["https://docs.example.com/blog/"],
    }
    p.refusal("https://cdn.example.net/b")
    assert "https://cdn.example.net/b" not in p.refused["other site"]
    with pytest.raises(ValueError, match="kind"):
        p.check("https://docs.example.com/", "image")


def test_refusal_is_a_plain_call_from_another_thread() -> None:
    """What a filtering proxy in front of the browser calls, for every request the page
    makes: the site's hosts, any path (scripts, styles, data), nothing else."""
    p = docs_policy()
    asked = {
        "https://docs.example.com/assets/app.js": None,
        "https://docs.example.com/api/search.json?q=x": None,
        "https://cdn.example.net/lib.js": "other site",
        "http://169.254.169.254/latest/meta-data/": "private address",
        "ws://docs.example.com/socket": "scheme",
    }
    got: dict[str, str | None] = {}

    def ask() -> None:
        for url in asked:
            got[url] = p.refusal(url)

    t = threading.Thread(target=ask)
    t.start()
    t.join()
    assert got == asked


def test_the_request_budget() -> None:
    p = docs_policy(max_requests=3)
    assert [p.spend() for _ in range(5)] == [None, None, None, "max-requests", "max-requests"]
    assert p.requests == 3 and p.spent == "max-requests"


def test_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(policy_module, "_now", lambda: clock[0])
    p = docs_policy(max_time=60)
    assert p.spend() is None and p.remaining() == 60
    clock[0] += 59
    assert p.expired() is None and p.remaining() == 1
    clock[0] += 1
    assert p.spend() == "max-time" and p.requests == 1
    clock[0] -= 30  # once out of time, out for good
    assert p.expired() == "max-time"
