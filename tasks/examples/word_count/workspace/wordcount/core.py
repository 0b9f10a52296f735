"""Word frequencies."""

from collections import Counter


def words(text: str) -> list[str]:
    return text.split()


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    counts = Counter(words(text))
    return counts.most_common(k)
