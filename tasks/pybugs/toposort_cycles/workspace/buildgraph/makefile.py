"""Parse "target: dep dep" lines."""
from __future__ import annotations


def parse_rules(text: str) -> dict[str, list[str]]:
    rules: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        target, _, rest = line.partition(":")
        rules.setdefault(target.strip(), []).extend(rest.split())
    return rules
