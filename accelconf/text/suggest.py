"""The one "did you mean" of the whole tree: the closest known names to a name nothing knows.

Every reader and rule that refuses a name (a config key, a flag, a kwarg, an env var, a DeepSpeed
key or class, a profile fact) asks :func:`ranked` or :func:`closest`, so that all of them rank the
same way: :class:`difflib.SequenceMatcher`'s ratio, best first, equal scores in alphabetical order,
nothing under ``cutoff``. ``fold_case`` compares without case (the candidate is returned as spelled);
``abbreviations`` also counts a CamelCase name with the same initials (``FSDPPlugin`` for
``FullyShardedDataParallelPlugin``) as close. :func:`hint` writes the usual message tail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

CUTOFF = 0.6


def _words(name: str) -> list[str]:
    """CamelCase words, an upper-case run kept whole: ``FSDPPlugin`` -> ``FSDP``, ``Plugin``."""
    return re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+", name)


def initials(name: str) -> str:
    """``FullyShardedDataParallelPlugin`` and ``FSDPPlugin`` both give ``FSDPP``."""
    return "".join(w if w.isupper() else w[0].upper() for w in _words(name))


@lru_cache(maxsize=4096)
def _camel(name: str) -> tuple[int, str]:
    """How many CamelCase words a name has, and its initials (a candidate list is ranked against
    many names: each candidate's words are found once)."""
    return len(_words(name)), initials(name)


def _score(name: str, candidate: str, fold_case: bool, abbreviations: bool) -> float:
    import difflib  # as in ranked

    a, b = (name.lower(), candidate.lower()) if fold_case else (name, candidate)
    spelled = difflib.SequenceMatcher(
        None, b, a
    ).ratio()  # difflib.get_close_matches' order (the ratio is not symmetric)
    if abbreviations and _camel(candidate)[0] > 1 and _camel(name)[1] == _camel(candidate)[1]:
        return max(spelled, 0.95)
    return spelled


def ranked(
    name: str,
    candidates: Iterable[str],
    n: int = 3,
    cutoff: float = CUTOFF,
    *,
    fold_case: bool = False,
    abbreviations: bool = False,
) -> list[str]:
    """Up to ``n`` candidates closest to ``name``, best first (ties alphabetical), none under ``cutoff``.

    The scores are :func:`_score`'s; as in :func:`difflib.get_close_matches`, one matcher holds the
    name, and a candidate whose quick upper bounds are under the cutoff, or under the ``n``-th best
    score found so far, is not scored in full (it could not be returned): ranking an unknown
    Trainer field against the few hundred known ones stays cheap."""
    if n <= 0:
        return []
    # difflib (and heapq) load with the first name nothing knows: a clean config never asks
    import difflib

    a = name.lower() if fold_case else name
    matcher = difflib.SequenceMatcher(None, "", a)
    best: list[tuple[float, str]] = []  # the n best so far, ordered as returned

    def keep(score: float, c: str) -> None:
        best.append((score, c))
        best.sort(key=lambda sc: (-sc[0], sc[1]))
        del best[n:]

    for c in set(candidates):
        floor = cutoff if len(best) < n else max(cutoff, best[-1][0])
        if abbreviations and _camel(c)[0] > 1 and _camel(name)[1] == _camel(c)[1]:
            keep(_score(name, c, fold_case, abbreviations), c)
            continue
        matcher.set_seq1(c.lower() if fold_case else c)
        if matcher.real_quick_ratio() >= floor and matcher.quick_ratio() >= floor:
            keep(matcher.ratio(), c)
    return [c for sc, c in best if sc >= cutoff]


def closest(
    name: str,
    candidates: Iterable[str],
    cutoff: float = CUTOFF,
    *,
    fold_case: bool = False,
    abbreviations: bool = False,
) -> str | None:
    """The one candidate closest to ``name``, or ``None`` when none is close enough."""
    got = ranked(name, candidates, 1, cutoff, fold_case=fold_case, abbreviations=abbreviations)
    return got[0] if got else None


def hint(choices: Iterable[str], quote: str = "`", prefix: str = "; ") -> str:
    """``"; did you mean `a` or `b`?"`` for the choices given, ``""`` for none."""
    shown = [f"{quote}{c}{quote}" for c in choices]
    return f"{prefix}did you mean {' or '.join(shown)}?" if shown else ""
