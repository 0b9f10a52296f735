"""Semantic versions (semver.org 2.0.0): parsing, ordering and bumping, for the release tooling."""

import re

_PATTERN = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$")


class Version:
    def __init__(self, major, minor, patch, prerelease=(), build=()):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    @classmethod
    def parse(cls, text):
        m = _PATTERN.match(text.strip())
        if not m:
            raise ValueError(f"not a semantic version: {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        for part in pre:
            if part == "" or (part.isdigit() and len(part) > 1 and part[0] == "0"):
                raise ValueError(f"bad pre-release identifier in {text!r}")
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)

    def __str__(self):
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def _key(self):
        # a release sorts after all of its pre-releases; numeric identifiers sort before alphanumeric ones
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 1 if not self.prerelease else 0, pre)

    def __eq__(self, other):
        return self._key() == other._key()

    def __lt__(self, other):
        return self._key() < other._key()

    def __le__(self, other):
        return self._key() <= other._key()

    def bump(self, part):
        if part == "major":
            return Version(self.major + 1, 0, 0)
        if part == "minor":
            return Version(self.major, self.minor + 1, 0)
        if part == "patch":
            if self.prerelease:
                return Version(self.major, self.minor, self.patch)
            return Version(self.major, self.minor, self.patch + 1)
        raise ValueError(f"unknown part {part!r}; use major, minor or patch")


def latest(versions, include_prereleases=False):
    """The highest version string of *versions*, or None; pre-releases only when asked."""
    parsed = [Version.parse(v) for v in versions]
    if not include_prereleases:
        parsed = [v for v in parsed if not v.prerelease]
    if not parsed:
        return None
    return str(max(parsed, key=Version._key))
