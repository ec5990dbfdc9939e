"""One Markdown page per rule (``docs/rules/<id>.md``), rendered from the catalogue: what the rule
catches, why, its default severity, whether ``fmt`` fixes it, and its examples with their fixes."""

from __future__ import annotations

from accelconf.catalogue import Example, Rule, all_rules


def _block(text: str, file: str) -> list[str]:
    lang = "json" if file.endswith(".json") else "yaml" if file.endswith((".yaml", ".yml")) else "text"
    return [f"```{lang}", *text.rstrip("\n").splitlines(), "```"]


def _example(e: Example) -> list[str]:
    where = (
        [f"`{e.file}`"]
        + ([f"accelerate {e.accelerate}"] if e.accelerate else [])
        + ([f"DeepSpeed runtime {e.runtime}"] if e.runtime else [])
        + ([f"`check --target {e.target}`"] if e.target else [])
    )
    head = f"### {e.case[:1].upper() + e.case[1:]}" if e.case else "### Example"
    out = [head, "", f"Checked as {', '.join(where)}" + (f"; reported as {e.severity}." if e.severity else "."), ""]
    out += _block(e.text, e.file)
    if e.fixed is not None:
        out += ["", "Fixed:", ""] + _block(e.fixed, e.file)
    return out + [""]


def markdown(rule: Rule) -> str:
    lines = [
        f"# `{rule.id}`",
        "",
        rule.summary,
        "",
        f"- Area: {rule.area}",
        f"- Default severity: {rule.severity}",
        f"- Fixed by `accelconf fmt`: {'yes' if rule.fmt_safe else 'no'}",
        f'- Turn it off: `--disable {rule.id}`, or `"accelconf.disabledRules": ["{rule.id}"]` in the editor',
        "",
    ]
    if rule.why:
        lines += ["## Why", "", rule.why, ""]
    if rule.examples:
        lines += ["## Examples", ""]
        for e in rule.examples:
            lines += _example(e)
    return "\n".join(lines).rstrip("\n") + "\n"


def pages() -> dict[str, str]:
    """``docs/rules/<id>.md`` -> its text, for every rule."""
    return {r.doc_path: markdown(r) for r in all_rules()}
