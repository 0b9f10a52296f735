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
        elif ch.isdigit():
            tokens.append(Token("NUMBER", ch, i))
            i += 1
        elif ch in OPERATORS:
            tokens.append(Token("OP", ch, i))
            i += 1
        else:
            raise LexError(f"unexpected {ch!r}", i + 1)
    return tokens
