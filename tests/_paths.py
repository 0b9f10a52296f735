"""Paths the core tests share (a plain module: conftest.py names clash across test folders)."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "tasks", "examples")
REFERENCE_DOC = os.path.join(EXAMPLES, "reference", "complex_code_refactor_01.json")


def example(name: str) -> str:
    return os.path.join(EXAMPLES, name, "task.json")
