"""Errors."""


class CycleError(ValueError):
    def __init__(self, nodes: list[str]) -> None:
        super().__init__("dependency cycle between: " + ", ".join(nodes))
        self.nodes = nodes
