"""The rule catalogue: every finding id accelconf can emit, with what it is about.

One :class:`Rule` per id: its area (which part of accelconf emits it), the severity it has unless a
case says otherwise, a one-line summary, why it matters, whether ``fmt`` applies its fix, and
examples that trigger it (each with the fixed document where one exists). The rules register here
(:func:`register`, called by the area modules below); the emitters name the ids they emit
(``validate.rule(...)``, ``checks.RULE_IDS``...) and fail at import when one is not registered.
``--disable``, the language server's ``disabledRules``, ``accelconf rules``, the SARIF rule metadata
and the generated rules reference all read this table.

Depends on nothing else in accelconf (it sits below ``text``), so every package may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]
AREAS: tuple[str, ...] = (
    "document",
    "accelerate",
    "deepspeed",
    "environment",
    "memory",
    "launch",
    "convert",
    "preflight",
    "trainer",
)
DOCS_URL = "docs/rules/{id}.md"  # one generated page per rule, relative to the repository root
# The planned public address of the documentation site and of schemas/, NOT LIVE YET: the one place it
# is written (the SchemaStore catalog, SARIF's helpUri and informationUri derive from it).
SITE = "https://accelconf.dev"
SITE_URL = SITE + "/rules/{id}/"  # a rule's page on the documentation site (MkDocs directory URLs)


@dataclass(frozen=True)
class Example:
    """A document that triggers a rule, and (``fixed``) the same document repaired, which does not.

    It is checked as ``accelconf validate`` checks a file named ``file`` (``check --target`` with
    ``target``), against ``accelerate`` / ``deepspeed`` releases when given. ``severity`` and ``key``
    are what the finding must have; ``case`` names what the example shows."""

    text: str
    fixed: str | None = None
    case: str = ""
    severity: Severity | None = None
    key: str = ""
    file: str = "c.yaml"
    accelerate: str | None = None
    deepspeed: str | None = None
    runtime: str | None = None
    target: str | None = None
    files: tuple[tuple[str, str], ...] = ()  # other files beside it (name, text)


@dataclass(frozen=True)
class Rule:
    id: str
    area: str
    severity: Severity
    summary: str
    why: str = ""
    fmt_safe: bool = False  # ``accelconf fmt`` applies this rule's text edits
    examples: tuple[Example, ...] = field(default=())

    @property
    def doc_path(self) -> str:
        return DOCS_URL.format(id=self.id)

    @property
    def help_uri(self) -> str:
        return SITE_URL.format(id=self.id)


_RULES: dict[str, Rule] = {}


def register(*rules: Rule) -> None:
    """Add rules to the catalogue; an id given twice is a programming error."""
    for r in rules:
        if r.id in _RULES:
            raise ValueError(f"rule {r.id!r} is registered twice")
        if r.area not in AREAS:
            raise ValueError(f"rule {r.id!r}: unknown area {r.area!r}")
        _RULES[r.id] = r


def _load() -> None:
    if _RULES:
        return
    from accelconf.catalogue import accelerate, conversion, deepspeed, document, environment, preflight, trainer

    for module in (document, accelerate, deepspeed, environment, conversion, preflight, trainer):
        register(*module.RULES)


def all_rules() -> list[Rule]:
    """Every rule, by area then id."""
    _load()
    return sorted(_RULES.values(), key=lambda r: (AREAS.index(r.area), r.id))


def get(rule_id: str) -> Rule | None:
    _load()
    return _RULES.get(rule_id)


def ids(area: str | None = None) -> frozenset[str]:
    _load()
    return frozenset(r.id for r in _RULES.values() if area is None or r.area == area)


def require(*rule_ids: str) -> tuple[str, ...]:
    """The ids, each checked to be in the catalogue (an emitter declares what it emits with this)."""
    _load()
    missing = [r for r in rule_ids if r not in _RULES]
    if missing:
        raise LookupError(f"rule ids not in the catalogue (accelconf/catalogue/): {', '.join(missing)}")
    return rule_ids


def describe(area: str) -> dict[str, str]:
    """id -> summary for one area (what ``checks.RULE_IDS`` and ``memory.RULE_IDS`` were)."""
    return {r.id: r.summary for r in all_rules() if r.area == area}


def nearest(rule_id: str) -> str | None:
    """The known id closest to an unknown one (a typo, or a rule of another tool)."""
    import difflib

    _load()
    got = difflib.get_close_matches(rule_id, list(_RULES), n=1, cutoff=0.5)
    if got:
        return got[0]
    tail = [r for r in _RULES if r.endswith(rule_id) or rule_id.endswith(r)]
    return tail[0] if tail else None


def unknown(rule_ids: Iterable[str]) -> list[tuple[str, str | None]]:
    """(id, nearest known id) for each id that is not in the catalogue, in the order given."""
    _load()
    return [(r, nearest(r)) for r in dict.fromkeys(rule_ids) if r not in _RULES]


def unknown_message(rule_ids: Iterable[str], what: str = "--disable") -> str | None:
    """One line naming the unknown ids and the nearest known ones, or ``None`` when all are known.
    ``what`` names where the ids were given (an option, a setting, a parameter); empty, the line
    starts with "unknown rule id" (argparse names the option itself). The one check of rule ids:
    ``--disable``, the server's ``disabledRules`` and the API's ``disabled=`` all ask it."""
    bad = unknown(rule_ids)
    if not bad:
        return None
    parts = [f"{r!r}" + (f" (did you mean {near!r}?)" if near else "") for r, near in bad]
    return f"{what + ': ' if what else ''}unknown rule id {', '.join(parts)}; `accelconf rules` lists them"
