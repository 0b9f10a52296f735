"""Recursive-descent evaluator: expr := term (('+'|'-') term)*, term := factor (('*'|'/') factor)*."""
from __future__ import annotations

from calc.errors import ParseError
from calc.lexer import tokenize


def evaluate(text: str) -> float:
    toks = tokenize(text)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        tok = peek()
        if tok is None:
            raise ParseError("unexpected end")
        pos += 1
        return tok

    def factor() -> float:
        tok = take()
        if tok.kind == "NUMBER":
            if peek() is not None and peek().kind == "NUMBER":
                raise ParseError(f"unexpected number at {peek().pos}")
            return float(tok.value)
        if tok.value == "-":
            return -factor()
        if tok.value == "(":
            v = expr()
            if take().value != ")":
                raise ParseError("expected )")
            return v
        raise ParseError(f"unexpected {tok.value!r}")

    def term() -> float:
        v = factor()
        while peek() is not None and peek().value in "*/":
            op = take().value
            rhs = factor()
            v = v * rhs if op == "*" else v / rhs
        return v

    def expr() -> float:
        v = term()
        while peek() is not None and peek().value in "+-":
            op = take().value
            rhs = term()
            v = v + rhs if op == "+" else v - rhs
        return v

    result = expr()
    if peek() is not None:
        raise ParseError(f"trailing input at {peek().pos}")
    return result
