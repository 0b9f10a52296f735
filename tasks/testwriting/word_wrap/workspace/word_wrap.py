"""Greedy word wrapping for the terminal report renderer (no textwrap: we need its exact rules)."""


def wrap(text, width, break_long_words=True):
    """Lines of at most *width* characters; words are separated by single spaces in the output."""
    if width < 1:
        raise ValueError("width must be at least 1")
    lines, current = [], ""
    for word in text.split():
        while break_long_words and len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def fill(text, width, indent="", **options):
    """One string: the wrapped lines, each prefixed by *indent* (which counts towards *width*)."""
    if len(indent) >= width:
        raise ValueError("the indent leaves no room for text")
    return "\n".join(indent + line for line in wrap(text, width - len(indent), **options))


def justify(line, width):
    """Stretch *line* to *width* by widening its gaps, leftmost gaps first."""
    words = line.split()
    if len(words) < 2 or len(line) >= width:
        return line
    gaps = len(words) - 1
    spaces = width - sum(len(w) for w in words)
    base, extra = divmod(spaces, gaps)
    out = ""
    for i, word in enumerate(words[:-1]):
        out += word + " " * (base + (1 if i < extra else 0))
    return out + words[-1]
