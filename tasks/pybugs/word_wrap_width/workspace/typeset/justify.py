"""Full justification."""
from __future__ import annotations

from typeset.wrap import wrap_text


def justify(text: str, width: int) -> list[str]:
    """Pad inner gaps so each line but the last is exactly ``width`` long."""
    lines = wrap_text(text, width)
    out = []
    for i, line in enumerate(lines):
        words = line.split()
        if i == len(lines) - 1 or len(words) == 1:
            out.append(line)
            continue
        gaps = len(words) - 1
        spaces = width - sum(map(len, words))
        q, r = divmod(spaces, gaps)
        out.append("".join(w + " " * (q + (1 if j < r else 0)) for j, w in enumerate(words[:-1])) + words[-1])
    return out
