"""Schema: TOML files, derived enum tails, the closed edge vocabulary."""

from __future__ import annotations

import pytest

from cogitave.errors import EdgeLabelError, SchemaError
from cogitave.nodes import Edge
from cogitave.schema import EDGE_LABELS, Schema, check_edge_label

TOML = """
[dimensions.title]
type = "semantic"

[dimensions.age]
type = "exact"
tails = [{ gte = 65, words = ["elderly"] }, { lt = 18, words = ["child", "minor"] }]

[dimensions.sex]
type = "exact"
tails = [{ equals = "M", words = ["male"] }, { equals = "F", words = ["female"] }]
"""


def test_load_toml_with_tails(tmp_path):
    p = tmp_path / "schema.toml"
    p.write_text(TOML)
    s = Schema.load(p)
    assert s.semantic == ["title"]
    assert s.exact == ["age", "sex", "kind"]
    assert s["age"].tail_words([72]) == ["elderly"]
    assert s["age"].tail_words([12]) == ["child", "minor"]
    assert s["age"].tail_words([40]) == []
    assert s["sex"].tail_words(["m"]) == ["male"]
    assert Schema.from_dict(s.to_dict()).hash() == s.hash()


@pytest.mark.parametrize(
    "bad",
    [
        "not toml [",
        "[dimensions.x]\ntype = 'fuzzy'",
        "[dimensions.x]\ntype = 'semantic'\ntails = [{ equals = 'a', words = ['b'] }]",
        "[dimensions.x]\ntype = 'exact'\ntails = [{ words = ['b'] }]",
        "[dimensions.x]\ntype = 'exact'\ntails = [{ gte = 'old', words = ['b'] }]",
        "[dimensions.'bad name']\ntype = 'exact'",
        "[other]\nx = 1",
    ],
)
def test_bad_schema_files_are_clear_errors(tmp_path, bad):
    p = tmp_path / "s.toml"
    p.write_text(bad)
    with pytest.raises(SchemaError):
        Schema.load(p)


def test_edge_vocabulary_is_closed():
    assert len(EDGE_LABELS) == 9
    for label in EDGE_LABELS:
        assert check_edge_label(label) == label
    with pytest.raises(EdgeLabelError, match="partOf, dependsOn, xref"):
        Edge("relatedTo", "x")
