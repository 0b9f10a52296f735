"""Lexer for arithmetic expressions."""
from __future__ import annotations

from dataclasses import dataclass

from calc.errors import LexError

OPERATORS = set("+-*/()")


@dataclass(frozen=True)
class Token:
    kind: str  # "NUMBER" or "OP"
    value: str
    pos: int


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into NUMBER and OP tokens; whitespace is ignored."""
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch.isdigit() or (ch == "." and i + 1 < len(text) and text[i + 1].isdigit()):
            start = i
            seen_dot = False
            while i < len(text) and (text[i].isdigit() or (text[i] == "." and not seen_dot)):
                seen_dot = seen_dot or text[i] == "."
                i += 1
            tokens.append(Token("NUMBER", text[start:i], start))
        elif ch in OPERATORS:
            tokens.append(Token("OP", ch, i))
            i += 1
        else:
            raise LexError(f"unexpected {ch!r} at column {i}", i)
    return tokens
