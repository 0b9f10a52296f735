"""Task model."""
from dataclasses import dataclass


@dataclass(eq=False)
class Task:
    name: str
    priority: int = 5
