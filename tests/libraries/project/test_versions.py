"""Matching: the held docs version that fits the version a project uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from cogitave.libraries.project import Dependency, match_version


def dep(
    key: str,
    version: str | None = None,
    specifier: str | None = None,
    ecosystem: str = "python",
) -> Dependency:
    return Dependency(key, key, ecosystem, version, specifier, "x", False)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- match_version


def test_exact_match_compares_versions_not_strings() -> None:
    m = match_version(dep("fastapi", "0.115.0"), ["0.110.0", "0.115", "0.116.0"])
    assert (m.held, m.match, m.wanted) == ("0.115", "exact", "0.115.0")
    assert m.reason == "0.115.0 is held as 0.115"
    m = match_version(dep("fastapi", "0.115.0"), ["0.115.0"])
    assert (m.held, m.match, m.reason) == ("0.115.0", "exact", "0.115.0 is held")


def test_exact_match_for_npm_coerces_partial_versions() -> None:
    m = match_version(dep("vue", "3.4.0", ecosystem="npm"), ["v2", "v3.4", "3.5.0"])
    assert (m.held, m.match) == ("v3.4", "exact")
    m = match_version(dep("vue", "2.0.0", ecosystem="npm"), ["v2", "v3.4"])
    assert (m.held, m.match) == ("v2", "exact")


def test_nearest_is_the_newest_held_version_not_newer_than_the_installed_one() -> None:
    m = match_version(dep("fastapi", "0.110.2"), ["0.100.0", "0.110.0", "0.111.0", "0.115.0"])
    assert (m.held, m.match) == ("0.110.0", "nearest")
    assert m.reason == "0.110.2 is not held; nearest older held version 0.110.0"
    m = match_version(dep("react", "18.2.0", ecosystem="npm"), ["17.0.2", "18.0.0", "19.0.0"])
    assert (m.held, m.match) == ("18.0.0", "nearest")


def test_none_when_every_held_version_is_newer() -> None:
    m = match_version(dep("fastapi", "0.90.0"), ["0.100.0", "0.110.0"])
    assert (m.held, m.match, m.wanted) == (None, "none", "0.90.0")
    assert "0.100.0, 0.110.0" in m.reason and "newer" in m.reason


def test_prereleases_order_below_their_release() -> None:
    m = match_version(dep("django", "5.0rc1"), ["4.2", "5.0"])
    assert (m.held, m.match) == ("4.2", "nearest")
    m = match_version(dep("next", "14.0.0-canary.5", ecosystem="npm"), ["13.5.0", "14.0.0"])
    assert (m.held, m.match) == ("13.5.0", "nearest")
    m = match_version(dep("next", "14.0.0-canary.5", ecosystem="npm"), ["14.0.0-canary.2"])
    assert (m.held, m.match) == ("14.0.0-canary.2", "nearest")


def test_range_picks_the_newest_held_version_satisfying_it() -> None:
    held = ["0.99.0", "0.105.0", "0.110.0", "1.0.0"]
    m = match_version(dep("fastapi", specifier=">=0.100,<1"), held)
    assert (m.held, m.match, m.wanted) == ("0.110.0", "range", ">=0.100,<1")
    assert ">=0.100,<1" in m.reason and "0.110.0" in m.reason
    m = match_version(
        dep("react", specifier="^18.2.0", ecosystem="npm"), ["17.0.2", "18.3.1", "19.0.0"]
    )
    assert (m.held, m.match) == ("18.3.1", "range")
    m = match_version(dep("ts", specifier="~5.4", ecosystem="npm"), ["5.3.3", "5.4.5", "5.5.0"])
    assert m.held == "5.4.5"
    m = match_version(
        dep("x", specifier="1.x || >=3 <4", ecosystem="npm"), ["1.2.0", "2.0.0", "3.1.0"]
    )
    assert m.held == "3.1.0"


def test_range_in_poetry_syntax() -> None:
    held = ["4.1", "4.2", "5.0"]
    assert match_version(dep("django", specifier="^4.1"), held).held == "4.2"
    assert match_version(dep("django", specifier="~4.1"), held).held == "4.1"
    assert match_version(dep("django", specifier=">=4.0 <5.0"), held).held == "4.2"
    assert match_version(dep("numpy", specifier="^0.2.3"), ["0.2.9", "0.3.0"]).held == "0.2.9"
    assert (
        match_version(dep("numpy", specifier="^1.24 || ^2.0"), ["1.26", "2.1", "3.0"]).held == "2.1"
    )


def test_range_that_nothing_satisfies_is_none() -> None:
    m = match_version(dep("react", specifier="^16.0.0", ecosystem="npm"), ["17.0.2", "18.3.1"])
    assert (m.held, m.match) == (None, "none")
    assert "^16.0.0" in m.reason and "17.0.2, 18.3.1" in m.reason


def test_a_range_above_every_version_held_is_read_from_the_nearest_older() -> None:
    m = match_version(dep("flask", specifier="~=3.0"), ["1.1.4", "2.2.2"])
    assert (m.held, m.match, m.wanted) == ("2.2.2", "nearest", "~=3.0")
    assert "no held version satisfies ~=3.0; nearest older held version 2.2.2" in m.reason
    m = match_version(dep("react", specifier="^19.0.0", ecosystem="npm"), ["17.0.2", "18.3.1"])
    assert (m.held, m.match) == ("18.3.1", "nearest")
    # a range below every version held, or with no lower bound, still reads nothing
    assert match_version(dep("flask", specifier="<1.0"), ["2.2.2"]).match == "none"


def test_range_skips_prereleases_unless_it_names_one() -> None:
    held = ["1.9.0", "2.0.0b1"]
    assert match_version(dep("x", specifier=">=1.0"), held).held == "1.9.0"
    assert match_version(dep("x", specifier=">=2.0.0a1"), held).held == "2.0.0b1"


def test_latest_without_version_information() -> None:
    m = match_version(None, ["1.0", "2.1", "2.0", "3.0rc1", "latest"])
    assert (m.held, m.match, m.wanted) == ("2.1", "latest", None)
    assert "no version information" in m.reason
    m = match_version(dep("x"), ["0.9", "1.0"])
    assert (m.held, m.match) == ("1.0", "latest")
    m = match_version(None, ["3.0rc1"])
    assert m.held == "3.0rc1"  # a prerelease only when nothing else is held


def test_a_specifier_that_is_not_a_range_says_so() -> None:
    m = match_version(
        dep("left-pad", specifier="github:stevemao/left-pad", ecosystem="npm"), ["1.3.0"]
    )
    assert (m.held, m.match) == ("1.3.0", "latest")
    assert "not a version range" in m.reason
    m = match_version(
        dep("x", version="not-a-version", specifier="^1.0", ecosystem="npm"), ["1.2.0"]
    )
    assert (m.held, m.match) == ("1.2.0", "range") and "does not parse" in m.reason


def test_x_patterns_cover_their_series() -> None:
    held = ["9.x.x", "10.x.x", "11.0.0"]
    m = match_version(dep("nx", "10.2.1", ecosystem="npm"), held)
    assert (m.held, m.match) == ("10.x.x", "exact")
    assert m.reason == "10.2.1 falls in held 10.x.x"
    # an equal version is preferred to a covering pattern
    assert match_version(dep("nx", "11.0.0", ecosystem="npm"), [*held, "11.x"]).held == "11.0.0"
    # a series entirely older is a nearest candidate, above the versions inside it
    m = match_version(dep("nx", "12.1.0", ecosystem="npm"), ["10.x.x", "10.5.0"])
    assert (m.held, m.match) == ("10.x.x", "nearest")
    assert match_version(dep("nx", "8.0.0", ecosystem="npm"), held).match == "none"
    assert match_version(dep("django", "4.2.13"), ["4.1.x", "4.2.x"]).held == "4.2.x"
    # ranges meet patterns
    assert match_version(dep("nx", specifier="^10.1.0", ecosystem="npm"), held).held == "10.x.x"
    assert match_version(dep("nx", specifier="~10.1.0", ecosystem="npm"), held).held == "10.x.x"
    assert (
        match_version(dep("d", specifier=">=4.2,<4.3"), ["4.1.x", "4.2.x", "5.x"]).held == "4.2.x"
    )
    assert match_version(None, ["9.x.x", "10.x.x"]).held == "10.x.x"


def test_unparseable_held_versions_are_never_exact_or_nearest() -> None:
    held = ["latest", "main", "next", "edge"]
    m = match_version(dep("x", "1.2.3"), held)
    assert (m.held, m.match) == (None, "none")
    assert "latest, main, next, edge" in m.reason
    assert match_version(dep("x", specifier=">=1"), held).match == "none"
    # only the latest rule takes a tag, and only when no held version parses
    m = match_version(None, ["edge", "main", "latest"])
    assert (m.held, m.match) == ("latest", "latest")
    assert match_version(None, ["main", "dev"]).held == "main"
    assert match_version(None, ["main", "1.0"]).held == "1.0"
    assert match_version(None, ["edge", "wip"]).match == "none"
    m = match_version(dep("x", "2.0.0"), ["latest", "1.0.0"])
    assert (m.held, m.match) == ("1.0.0", "nearest")


def test_nothing_held() -> None:
    m = match_version(dep("x", "1.0"), [])
    assert (m.held, m.match, m.wanted) == (None, "none", "1.0")


def test_reasons_are_one_line() -> None:
    held = [f"1.{i}.0" for i in range(30)]
    for d in (None, dep("x", "0.1"), dep("x", "1.5.0"), dep("x", specifier=">=9")):
        reason = match_version(d, held).reason
        assert "\n" not in reason and len(reason) < 200, reason


versions = st.tuples(
    st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.sampled_from(["", "rc1", "a2"])
)


def _python(v: tuple[int, int, int, str]) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}{v[3]}"


def _npm(v: tuple[int, int, int, str]) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}" + (f"-{v[3]}" if v[3] else "")


@settings(max_examples=300, deadline=None)
@given(held=st.lists(versions, max_size=12), installed=versions)
def test_property_never_newer_and_the_newest_not_newer(
    held: list[tuple[int, int, int, str]], installed: tuple[int, int, int, str]
) -> None:
    def key(v: tuple[int, int, int, str]) -> tuple[int, int, int, int, str]:
        return (v[0], v[1], v[2], 0 if v[3] else 1, v[3])  # a prerelease below its release

    for ecosystem, text in (("python", _python), ("npm", _npm)):
        texts = [text(v) for v in held]
        m = match_version(dep("lib", text(installed), ecosystem=ecosystem), texts)
        not_newer = [v for v in held if key(v) <= key(installed)]
        if not not_newer:
            assert (m.held, m.match) == (None, "none")
            continue
        assert m.held in texts
        chosen = held[texts.index(m.held)]
        assert key(chosen) <= key(installed)
        assert key(chosen) == max(key(v) for v in not_newer)
        assert m.match == ("exact" if key(chosen) == key(installed) else "nearest")
        if ecosystem == "python":  # the ordering used above is PEP 440's for these versions
            assert Version(m.held) <= Version(text(installed))
