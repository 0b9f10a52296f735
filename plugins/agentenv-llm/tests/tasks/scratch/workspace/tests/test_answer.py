"""Graded checks that random text passes some of and a real model all of: GRPO needs rewards that vary."""
import pathlib

TEXT = (pathlib.Path(__file__).parent.parent / "answer.py").read_text(errors="replace")


def test_not_empty():
    assert TEXT.strip()


def test_has_a_digit():
    assert any(ch.isdigit() for ch in TEXT)


def test_has_a_call():
    assert "(" in TEXT


def test_has_a_block():
    assert ":" in TEXT


def test_defines_a_function():
    assert "def " in TEXT


def test_compiles():
    compile(TEXT, "answer.py", "exec")
