"""Errors."""


class HandlerErrors(Exception):
    def __init__(self, errors: list[Exception]) -> None:
        super().__init__(f"{len(errors)} handler(s) failed")
        self.errors = errors
