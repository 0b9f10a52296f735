"""Roman numeral conversion."""
from __future__ import annotations

from numerals.errors import RomanError

SYMBOLS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(n: int) -> str:
    if not isinstance(n, int) or not 1 <= n <= 3999:
        raise RomanError(f"out of range: {n!r}")
    out = []
    for value, sym in SYMBOLS:
        count, n = divmod(n, value)
        out.append(sym * count)
    return "".join(out)


def from_roman(s: str) -> int:
    if not s or any(ch not in VALUES for ch in s.upper()):
        raise RomanError(f"invalid numeral {s!r}")
    s = s.upper()
    total = 0
    for i, ch in enumerate(s):
        v = VALUES[ch]
        if i + 1 < len(s) and VALUES[s[i + 1]] > v:
            total -= v
        else:
            total += v
    if to_roman(total) != s:
        raise RomanError(f"non-canonical numeral {s!r}")
    return total
