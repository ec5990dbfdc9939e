"""The one "did you mean" ranking (accelconf.text.suggest) every reader and rule uses."""

from __future__ import annotations

from functools import partial

from accelconf.text import suggest

# the kwargs reader's ranking: case folded, abbreviations count
R = partial(suggest.ranked, fold_case=True, abbreviations=True)


def test_words_and_initials() -> None:
    assert suggest._words("FSDPPlugin") == ["FSDP", "Plugin"]
    assert suggest._words("TERecipeKwargs") == ["TE", "Recipe", "Kwargs"]
    assert suggest._words("fp8_format") == ["fp8", "format"]
    assert suggest._words("ABC") == ["ABC"]
    assert suggest.initials("FullyShardedDataParallelPlugin") == suggest.initials("FSDPPlugin") == "FSDPP"
    assert suggest.initials("fp8_format") == "FF"


def test_ranked_is_best_first_ties_alphabetical_cut_at_the_ratio() -> None:
    # best first, ties by name, at most n, each name once
    assert suggest.ranked("abc", ["abd", "abc", "abf", "abe", "abd"], fold_case=True, abbreviations=True) == [
        "abc",
        "abd",
        "abe",
    ]
    assert R("abc", ["abg", "abf", "abe", "abd"], n=4) == ["abd", "abe", "abf", "abg"]
    # the cut-off is a ratio of 0.6, inclusive (2 * 3 matching / 10 characters)
    assert R("abcde", ["abcxy", "abxyz"]) == ["abcxy"]
    # case does not count in the spelling
    assert R("ABC", ["abc"]) == ["abc"]
    # the same initials (of two words or more) is an abbreviation, ranked below an exact spelling
    assert R("FSDPPlugin", ["FullyShardedDataParallelPlugin", "Fsdpplugin"]) == [
        "Fsdpplugin",
        "FullyShardedDataParallelPlugin",
    ]
    assert R("Qrs", ["Qxyzw"]) == []
    assert R("QR", ["QuickRun"]) == ["QuickRun"]


def test_ranked_without_fold_case_counts_case_and_closest_returns_one_or_none() -> None:
    assert suggest.ranked("ABC", ["abc"]) == []
    assert suggest.closest("mixed_precison", ["mixed_precision", "num_processes"]) == "mixed_precision"
    assert suggest.closest("zzzz", ["mixed_precision"]) is None
    assert suggest.closest("abcd", ["abxy"], 0.5) == "abxy" and suggest.closest("abcd", ["abxy"]) is None


def test_hint_joins_choices_and_is_empty_for_none() -> None:
    assert suggest.hint(["a", "b"]) == "; did you mean `a` or `b`?"
    assert suggest.hint([]) == ""


def test_an_abbreviation_candidate_spelled_as_the_name_ranks_above_a_mere_abbreviation() -> None:
    # both candidates have the initials AC of `abCd`: an abbreviation scores at least 0.95, and the
    # one spelled like the name (case folded) scores its full ratio 1.0, so it comes first although
    # it sorts second alphabetically
    assert R("abCd", ["AaaCcc", "AbCd"]) == ["AbCd", "AaaCcc"]
    # without fold_case the spelling differs by case: both score 0.95, the tie goes alphabetical
    assert suggest.ranked("abCd", ["AbCd", "AaaCcc"], abbreviations=True) == ["AaaCcc", "AbCd"]


def test_closest_passes_its_options_through() -> None:
    assert suggest.closest("ABC", ["abc"], fold_case=True) == "abc"
    assert suggest.closest("ABC", ["abc"]) is None  # case counts by default
    assert suggest.closest("FSDPPlugin", ["FullyShardedDataParallelPlugin"], abbreviations=True) == (
        "FullyShardedDataParallelPlugin"
    )
    assert suggest.closest("FSDPPlugin", ["FullyShardedDataParallelPlugin"]) is None  # no abbreviations by default


def test_ranked_defaults_and_edges() -> None:
    assert suggest.ranked("FSDPPlugin", ["FullyShardedDataParallelPlugin"]) == []  # no abbreviations by default
    assert suggest.ranked("ABC", ["ABC", "abc"]) == ["ABC"]  # without fold_case neither side is folded
    assert suggest.ranked("abc", ["abc"], n=0) == []
    # a ratio of exactly the cutoff whose quick upper bound is the cutoff too (3 of 3 + 7 characters)
    assert suggest.ranked("abc", ["abcdefg"]) == ["abcdefg"]
