"""The one "did you mean" of the whole tree: the closest known names to a name nothing knows.

Every reader and rule that refuses a name (a config key, a flag, a kwarg, an env var, a DeepSpeed
key or class, a profile fact) asks :func:`ranked` or :func:`closest`, so that all of them rank the
same way: :class:`difflib.SequenceMatcher`'s ratio, best first, equal scores in alphabetical order,
nothing under ``cutoff``. ``fold_case`` compares without case (the candidate is returned as spelled);
``abbreviations`` also counts a CamelCase name with the same initials (``FSDPPlugin`` for
``FullyShardedDataParallelPlugin``) as close. :func:`hint` writes the usual message tail.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

CUTOFF = 0.6


def _words(name: str) -> list[str]:
    """CamelCase words, an upper-case run kept whole: ``FSDPPlugin`` -> ``FSDP``, ``Plugin``."""
    return re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+", name)


def initials(name: str) -> str:
    """``FullyShardedDataParallelPlugin`` and ``FSDPPlugin`` both give ``FSDPP``."""
    return "".join(w if w.isupper() else w[0].upper() for w in _words(name))


def _score(name: str, candidate: str, fold_case: bool, abbreviations: bool) -> float:
    a, b = (name.lower(), candidate.lower()) if fold_case else (name, candidate)
    spelled = difflib.SequenceMatcher(
        None, b, a
    ).ratio()  # difflib.get_close_matches' order (the ratio is not symmetric)
    if abbreviations and len(_words(candidate)) > 1 and initials(name) == initials(candidate):
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
    """Up to ``n`` candidates closest to ``name``, best first (ties alphabetical), none under ``cutoff``."""
    scored = sorted(
        ((_score(name, c, fold_case, abbreviations), c) for c in set(candidates)), key=lambda sc: (-sc[0], sc[1])
    )
    return [c for sc, c in scored[:n] if sc >= cutoff]


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
