"""Errors."""


class LexError(ValueError):
    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


class ParseError(ValueError):
    pass
