"""Settings: TOML values set by key, refused when the key or the type is wrong."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Settings
from cogitave.errors import SchemaError
from cogitave.schema import Dimension, Schema


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


def test_a_root_written_with_the_retired_router_switch_still_opens(tmp_path: Path) -> None:
    """Older versions stored ``routing.learned_enabled`` in every root: such a root opens,
    ranks, and takes new settings, the retired key dropped."""
    col = Collection.create(tmp_path / "c", Schema((Dimension("body", "semantic"),)), encoder=None)
    col.add([Node("a", dims={"body": "tuning the cache"}), Node("b", dims={"body": "roses"})])
    col.publish()
    store = col.store
    manifest = store.read_root(store.head())
    old = manifest.settings or {}
    routing = {**old["routing"], "learned_enabled": True}
    rid = store.write_root(replace(manifest, settings={**old, "routing": routing}))
    store.set_head(rid)
    assert "learned_enabled" in store.read_root(store.head()).settings["routing"]
    reopened = Collection.open(tmp_path / "c")
    assert reopened.snapshot.settings == Settings()
    assert reopened.search(SearchRequest(query="cache")).uids == ["a"]
    reopened.configure(Settings().with_sets(["routing.df_guard=0.5"]))
    assert reopened.snapshot.settings.routing.df_guard == 0.5


def test_the_retired_router_switch_is_refused_with_its_reason(tmp_path: Path) -> None:
    toml = tmp_path / "settings.toml"
    toml.write_text("[routing]\nlearned_enabled = false\ndf_guard = 0.5\n", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"learned_enabled was removed \(there is no learned"):
        Settings.load(toml)
    with pytest.raises(SchemaError, match="learned_enabled was removed"):
        Settings().with_sets(["routing.learned_enabled=true"])
    assert "learned_enabled" not in Settings().to_dict()["routing"]
