import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "tasks", "examples")
REFERENCE_DOC = os.path.join(EXAMPLES, "reference", "complex_code_refactor_01.json")


@pytest.fixture(scope="session")
def repo():
    return REPO


def example(name: str) -> str:
    return os.path.join(EXAMPLES, name, "task.json")
