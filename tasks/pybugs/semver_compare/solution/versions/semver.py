"""Semantic version comparison (semver 2.0 precedence)."""
from __future__ import annotations

from functools import total_ordering

from versions.errors import InvalidVersion
from versions.patterns import SEMVER_RE


def _ident_key(ident: str) -> tuple[int, int, str]:
    """Numeric identifiers sort numerically and before alphanumeric ones."""
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


@total_ordering
class Version:
    def __init__(self, text: str) -> None:
        m = SEMVER_RE.match(text.strip())
        if not m:
            raise InvalidVersion(text)
        self.major, self.minor, self.patch = int(m["major"]), int(m["minor"]), int(m["patch"])
        self.pre = tuple(m["pre"].split(".")) if m["pre"] else ()
        self.text = text.strip()

    def _key(self) -> tuple:
        # a release sorts after all of its pre-releases
        pre = (1,) if not self.pre else (0, tuple(_ident_key(p) for p in self.pre))
        return (self.major, self.minor, self.patch, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: "Version") -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def compare(a: str, b: str) -> int:
    """-1 if a < b, 0 if equal precedence, 1 if a > b."""
    va, vb = Version(a), Version(b)
    return (va > vb) - (va < vb)
