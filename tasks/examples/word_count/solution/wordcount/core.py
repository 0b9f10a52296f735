"""Word frequencies."""

import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    counts = Counter(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:k]
