"""Roman numerals for chapter numbering: strict conversion both ways (1..3999)."""

_VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
           (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
_SYMBOLS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    if not isinstance(number, int) or isinstance(number, bool):
        raise TypeError("expected an int")
    if not 0 < number < 4000:
        raise ValueError(f"{number} is out of range (1..3999)")
    out = []
    for value, symbol in _VALUES:
        count, number = divmod(number, value)
        out.append(symbol * count)
    return "".join(out)


def from_roman(text):
    """The value of a numeral in standard (subtractive) form; anything else is refused."""
    text = text.strip().upper()
    if not text or any(ch not in _SYMBOLS for ch in text):
        raise ValueError(f"not a roman numeral: {text!r}")
    total = 0
    for i, ch in enumerate(text):
        value = _SYMBOLS[ch]
        if i + 1 < len(text) and _SYMBOLS[text[i + 1]] > value:
            total -= value
        else:
            total += value
    if total <= 0 or total >= 4000 or to_roman(total) != text:
        raise ValueError(f"not a standard roman numeral: {text!r}")
    return total


def chapter_label(n, style="upper"):
    numeral = to_roman(n)
    if style == "upper":
        return numeral
    if style == "lower":
        return numeral.lower()
    raise ValueError("style is 'upper' or 'lower'")
