"""A small, hand-made product catalogue where each planner rule has a query that shows it."""

from __future__ import annotations

from pathlib import Path

from cogitave import Collection, Node
from cogitave.config import Settings
from cogitave.schema import Dimension, Schema, TailRule

# A product's name, material, colour and description are independent facets: routing and the
# coherence gate act between them (the planner rules of the spec).
SCHEMA = Schema(
    (
        Dimension("title", "semantic", facet=True),
        Dimension("material", "semantic", facet=True),
        Dimension("colour", "semantic", facet=True),
        Dimension("description", "semantic", facet=True),
        Dimension(
            "gender",
            "exact",
            (TailRule(("male", "men"), equals="M"), TailRule(("female", "women"), equals="F")),
        ),
        Dimension(
            "age", "exact", (TailRule(("elderly", "senior"), gte=65), TailRule(("child",), lt=13))
        ),
    )
)

# uid: (title, material, colour, gender, age)
PRODUCTS = {
    "boot-red-leather": ("Chelsea boots", "leather", "red", "M", 30),
    "boot-black-leather": ("Hiking boots", "leather", "black", "F", 40),
    "boot-red-cotton": ("Canvas boots", "cotton", "red", "F", 25),
    "bag-red-leather": ("Shoulder bag", "leather", "red", "F", 35),
    "bag-red-cotton": ("Tote bag", "cotton", "red", "F", 20),
    "bag-blue-wool": ("Winter bag", "wool", "blue", "M", 70),
    "scarf-purple-cotton": ("Light scarf", "cotton", "purple", "F", 68),
    "scarf-green-wool": ("Warm scarf", "wool", "green", "M", 8),
    "glove-black-suede": ("Driving gloves", "suede", "black", "M", 50),
    "loafer-suede": ("Suede loafers", "leather", "brown", "M", 45),
    "loafer-red-suede": ("City loafers", "suede", "red", "F", 33),
    "belt-brown-leather": ("Classic belt", "leather", "brown", "M", 52),
    "hat-grey-wool": ("Flat cap", "wool", "grey", "M", 75),
    "sock-white-cotton": ("Sport socks", "cotton", "white", "F", 10),
    "shirt-male-model": ("Oxford shirt", "cotton", "white", "M", 28),
}
DESCRIPTIONS = {
    "shirt-male-model": "item worn by a male model in the catalogue photos",
    "boot-red-leather": "item with elastic sides for everyday walking",
}


def nodes() -> list[Node]:
    out = []
    for uid, (title, material, colour, gender, age) in PRODUCTS.items():
        desc = DESCRIPTIONS.get(uid, "item for daily use")
        out.append(
            Node(
                uid=uid,
                kind="product",
                dims={
                    "title": title,
                    "material": material,
                    "colour": colour,
                    "description": desc,
                    "gender": gender,
                    "age": age,
                },
            )
        )
    return out


def build(
    path: Path, *, encoder: str | None = None, settings: Settings | None = None
) -> Collection:
    kw = {} if encoder == "default" else {"encoder": encoder}
    col = Collection.create(path, SCHEMA, settings=settings or Settings(lexicon="none"), **kw)
    col.add(nodes())
    col.publish()
    return col
