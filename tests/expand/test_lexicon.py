"""The real-word gate: loaders, de-inflection, the wordfreq misspelling filter, config specs."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cogitave.errors import InputError, NotFoundError
from cogitave.expand import lexicon as lx
from cogitave.expand.lexicon import (
    FUNCTION_WORDS,
    ConceptNetLexicon,
    Lexicon,
    NullLexicon,
    SystemWordsLexicon,
    WordfreqLexicon,
    WordSetLexicon,
    base_forms,
    default_lexicon,
    lexicon_from_config,
)
from tests.conftest import data_dir

VOCAB_TSV = "leather\tn\nboot\tn\nrun\tv\nhappy\ta\ncarry\tv\nbig\ta\nice_cream\tn\nx-ray\tn\n"
ASSERTIONS = (
    "/a/[/r/IsA/,/c/en/battery/n/,/c/en/device/]\t/r/IsA\t/c/en/battery/n\t/c/en/device\t{}\n"
    "/a/[/r/IsA/,/c/de/hund/n/,/c/en/dog/]\t/r/IsA\t/c/de/hund/n\t/c/en/dog\t{}\n"
    "/a/[/r/RelatedTo/,/c/en/paint_brush/,/c/fr/pinceau/]\t/r/RelatedTo\t/c/en/paint_brush\t"
    "/c/fr/pinceau\t{}\n"
)


@pytest.fixture
def vocab_file(tmp_path: Path) -> Path:
    p = tmp_path / "en_vocab.txt"
    p.write_text(VOCAB_TSV, encoding="utf-8")
    return p


def test_conceptnet_vocab_tsv(vocab_file: Path) -> None:
    lex = ConceptNetLexicon.load(vocab_file)
    assert isinstance(lex, Lexicon)
    assert lex.is_word("leather") and lex.is_word("boot")
    # multi-word terms give their parts, not the joined form
    assert lex.is_word("ice") and lex.is_word("cream") and lex.is_word("ray")
    assert not lex.is_word("ice_cream") and not lex.is_word("icecream")
    assert not lex.is_word("leathr")
    # ConceptNet has no function words; the closed-class list fills them in
    assert lex.is_word("the") and "the" in FUNCTION_WORDS


def test_conceptnet_assertions_csv_plain_and_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "assertions.csv"
    plain.write_text(ASSERTIONS, encoding="utf-8")
    packed = tmp_path / "assertions.csv.gz"
    packed.write_bytes(gzip.compress(ASSERTIONS.encode()))
    for path in (plain, packed):
        lex = ConceptNetLexicon.load(path)
        assert lex.is_word("battery") and lex.is_word("device") and lex.is_word("dog")
        assert lex.is_word("paint") and lex.is_word("brush")
        assert not lex.is_word("hund") and not lex.is_word("pinceau")  # not /c/en/


def test_conceptnet_folder_and_missing(tmp_path: Path, vocab_file: Path) -> None:
    (tmp_path / "assertions.csv").write_text(ASSERTIONS, encoding="utf-8")
    lex = ConceptNetLexicon.load(tmp_path)
    assert lex.is_word("leather") and lex.is_word("battery")
    with pytest.raises(NotFoundError):
        ConceptNetLexicon.load(tmp_path / "nope.txt")


@pytest.mark.parametrize(
    ("token", "known"),
    [
        ("boots", True),  # -s
        ("batteries", True),  # -ies (from the assertions file)
        ("carried", True),  # -ied
        ("carries", True),
        ("running", True),  # doubled consonant
        ("runners", True),  # two suffixes: runners -> runner -> run
        ("bigger", True),
        ("biggest", True),
        ("happily", True),  # -ily
        ("happier", True),
        ("leathers", True),
        ("leathering", True),
        ("leathr", False),
        ("bootz", False),
        ("runing", True),  # the price of rules: run + ing
        ("rned", False),  # a base needs a vowel
    ],
)
def test_inflections(tmp_path: Path, vocab_file: Path, token: str, known: bool) -> None:
    (tmp_path / "a.csv").write_text(ASSERTIONS, encoding="utf-8")
    lex = ConceptNetLexicon.load(tmp_path)
    assert lex.is_word(token) is known


def test_base_forms_rules() -> None:
    assert "battery" in base_forms("batteries")
    assert "stop" in base_forms("stopped")
    assert "bake" in base_forms("baking")
    assert "simple" in base_forms("simply")
    assert "basic" in base_forms("basically")
    assert "fit" in base_forms("fitted")
    # undoubling needs consonant-vowel-consonant before the double: "staffed" keeps "staff"
    assert "staf" not in base_forms("staffed") and "staff" in base_forms("staffed")
    assert all(len(b) >= lx.MIN_BASE_LEN for b in base_forms("ties"))


def test_digits_are_never_words() -> None:
    lex = WordSetLexicon(frozenset({"x200", "100", "covid"}))
    assert not lex.is_word("x200") and not lex.is_word("100")
    assert lex.is_word("covid") and lex.is_word("COVID")


def test_null_lexicon() -> None:
    assert not NullLexicon().is_word("the")


def test_system_words(tmp_path: Path) -> None:
    p = tmp_path / "words"
    p.write_text("Leather\nboot\nboot's\n", encoding="utf-8")
    lex = SystemWordsLexicon.load(p)
    assert lex.is_word("leather") and lex.is_word("boots")
    with pytest.raises(NotFoundError):
        SystemWordsLexicon.load(tmp_path / "missing")


def test_wordfreq_floor_and_misspelling_filter() -> None:
    raw = WordfreqLexicon.load(1.0, reject_misspellings=False)
    lex = WordfreqLexicon.load(1.0)
    assert lex.is_word("leather") and lex.is_word("lather") and lex.is_word("batteries")
    # listed by wordfreq (people write it) but one swap from a far more frequent word
    assert raw.is_word("recieve") and not lex.is_word("recieve")
    assert lex.misspelling_of("recieve") == "receive"
    assert not lex.is_word("untill") and not lex.is_word("occured")
    # real words a vowel swap or a dropped letter away from a frequent word stay words
    for w in ("murine", "modal", "coarse", "cohesin", "lather", "statin"):
        assert lex.is_word(w), w
    assert not lex.is_word("leathr")
    high = WordfreqLexicon.load(4.0)
    assert lex.is_word("zebrafish") and not high.is_word("zebrafish")


def test_config_specs_and_cache(vocab_file: Path) -> None:
    a = lexicon_from_config(f"conceptnet:{vocab_file}")
    assert a is lexicon_from_config(f"conceptnet:{vocab_file}")  # loaded once per process
    assert isinstance(a, ConceptNetLexicon)
    assert isinstance(lexicon_from_config("none"), NullLexicon)
    wf = lexicon_from_config("wordfreq:3.0")
    assert isinstance(wf, WordfreqLexicon) and wf.min_zipf == 3.0
    raw = lexicon_from_config("wordfreq:2:raw")
    assert isinstance(raw, WordfreqLexicon) and not raw.reject_misspellings
    assert default_lexicon() is lexicon_from_config("default")
    assert isinstance(default_lexicon(), WordfreqLexicon)
    for bad in ("bogus", "wordfreq:abc", "wordfreq:2:what", "conceptnet", "none:x"):
        with pytest.raises(InputError):
            lexicon_from_config(bad)
    if not lx.SYSTEM_WORDS_PATH.is_file():
        with pytest.raises(NotFoundError):
            lexicon_from_config("system")


def test_real_conceptnet_vocabulary() -> None:
    path = data_dir("conceptnet") / "en_vocab.txt"
    lex = ConceptNetLexicon.load(path)
    assert len(lex) > 50_000
    for w in ("leather", "lather", "battery", "batteries", "painted", "the"):
        assert lex.is_word(w), w
    for w in ("leathr", "recieve", "batteris"):
        assert not lex.is_word(w), w
