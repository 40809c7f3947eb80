"""Settings: TOML values set by key, refused when the key or the type is wrong."""

from __future__ import annotations

import pytest

from cogitave.config import Settings
from cogitave.errors import SchemaError


def test_with_sets_reads_toml_values_and_keeps_the_rest() -> None:
    s = Settings().with_sets(
        ["feedback.enabled=true", 'docs.demote=["blog/*", "old/*"]', "lexicon=none"]
    )
    assert s.feedback.enabled is True and s.docs.demote == ("blog/*", "old/*")
    assert s.lexicon == "none"
    assert s.fusion == Settings().fusion and s.boost == Settings().boost
    assert Settings().with_sets([]) == Settings()


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ("feedback.nope=1", "nope"),
        ("feedbak.top=1", "feedbak"),
        ("feedback.top=many", "top"),
        ("feedback.top", "section.key=value"),
        ("=3", "section.key=value"),
    ],
)
def test_with_sets_refuses_what_it_cannot_apply(item: str, named: str) -> None:
    with pytest.raises(SchemaError, match=named):
        Settings().with_sets([item])
