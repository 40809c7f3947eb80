"""Which URLs a crawl may fetch: normal forms, the scope, other languages, and the redirect
policy (only http(s); never from a public host into a private address)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cogitave.errors import IngestError, InputError
from cogitave.ingest.web.scope import (
    Scope,
    is_private,
    language_of,
    normalize,
    redirect_refusal,
)


def test_normal_form() -> None:
    assert normalize("HTTPS://Docs.Python.org:443/3/library/index.html#x") == (
        "https://docs.python.org/3/library/"
    )
    assert normalize("http://h:8080/a/./b/../c.html") == "http://h:8080/a/c.html"
    assert normalize("../x/", "http://h/a/b/") == "http://h/a/x/"
    for bad in ("mailto:a@b", "javascript:alert(1)", "file:///etc/passwd", "ftp://h/x", ""):
        assert normalize(bad) is None


def test_default_scope_is_the_start_folder() -> None:
    s = Scope.of("https://docs.python.org/3/")
    assert s.why_not("https://docs.python.org/3/library/os.html") is None
    assert s.why_not("https://docs.python.org/2/library/os.html") == "scope"
    assert s.why_not("https://www.python.org/3/") == "scope"
    assert s.relative("https://docs.python.org/3/library/os.html") == "library/os.html"
    # a page given as the start: its folder
    assert Scope.of("https://h/guide/intro.html").prefix == "https://h/guide/"


def test_scope_widened_narrowed_and_globs() -> None:
    wide = Scope.of("https://h/3/", ["https://h/"])
    assert wide.why_not("https://h/2/x.html") is None
    narrow = Scope.of("https://h/3/", ["https://h/3/library/"], exclude=["*/internals*"])
    assert narrow.why_not("https://h/3/tutorial/") == "scope"
    assert narrow.why_not("https://h/3/library/os.html") is None
    assert narrow.why_not("https://h/3/library/os/internals.html") == "excluded"
    only = Scope.of("https://h/", include=["guide/**"])
    assert only.why_not("https://h/guide/a/b.html") is None
    assert only.why_not("https://h/blog/post/") == "excluded"
    with pytest.raises(InputError):
        Scope.of("https://h/", ["not a url"])
    with pytest.raises(IngestError):
        Scope.of("https://h/", include=["[z-a]"])


def test_other_languages_are_left_out() -> None:
    s = Scope.of("https://fastapi.example/").with_language("en")
    assert language_of("https://fastapi.example/fr/tutorial/", s.prefix) == "fr"
    assert s.why_not("https://fastapi.example/fr/tutorial/") == "language"
    assert s.why_not("https://fastapi.example/pt-br/") == "language"
    assert s.why_not("https://fastapi.example/en/tutorial/") is None
    # folders that are not languages, and a page named like one
    assert s.why_not("https://fastapi.example/go/setup/") is None
    assert s.why_not("https://fastapi.example/js/") is None
    assert s.why_not("https://fastapi.example/tutorial/de") is None
    # a page hreflang named in another language
    s.hreflang_others.add("https://fastapi.example/translated/")
    assert s.why_not("https://fastapi.example/translated/") == "language"
    everything = Scope.of("https://fastapi.example/", other_languages=True)
    assert everything.why_not("https://fastapi.example/fr/tutorial/") is None


def fake_dns(table: dict[str, list[str]]) -> Callable[[str], list[str]]:
    return lambda host: table.get(host, [])


def test_redirect_policy() -> None:
    dns = fake_dns({"docs.example.com": ["93.184.216.34"], "intranet.example.com": ["10.0.0.7"]})
    public = "docs.example.com"
    assert redirect_refusal(public, "https://docs.example.com/x/", dns) is None
    assert "private" in (redirect_refusal(public, "http://127.0.0.1:8080/", dns) or "")
    assert "private" in (redirect_refusal(public, "http://intranet.example.com/", dns) or "")
    assert "private" in (redirect_refusal(public, "http://[::1]/", dns) or "")
    assert "private" in (redirect_refusal(public, "http://169.254.169.254/latest/", dns) or "")
    assert "private" in (redirect_refusal(public, "http://localhost/", dns) or "")
    assert "file" in (redirect_refusal(public, "file:///etc/passwd", dns) or "")
    # a crawl started on a private address on purpose may stay there
    assert redirect_refusal("127.0.0.1", "http://127.0.0.1:9/", dns) is None
    assert is_private("10.1.2.3") and not is_private("93.184.216.34")
