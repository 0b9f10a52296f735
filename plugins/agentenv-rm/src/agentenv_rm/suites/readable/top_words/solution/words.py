"""Word frequencies of a text."""

import re
from collections import Counter

WORD = re.compile(r"[\w']+")


def top_words(text, count):
    """The `count` most frequent words of `text` (lowercased) with their frequencies.

    Words are runs of letters, digits, underscores and apostrophes; ties are broken
    alphabetically.
    """
    frequencies = Counter(WORD.findall(text.lower()))
    ranked = sorted(frequencies.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:count]
