"""A tiny calculator."""
from calc.errors import LexError, ParseError
from calc.lexer import Token, tokenize
from calc.parser import evaluate

__all__ = ["LexError", "ParseError", "Token", "evaluate", "tokenize"]
