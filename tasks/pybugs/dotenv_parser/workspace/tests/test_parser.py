import pytest
from envfile import EnvSyntaxError, parse_env


def test_simple():
    assert parse_env("A=1\nB = two\n") == {"A": "1", "B": "two"}


def test_equals_in_value():
    assert parse_env("URL=postgres://h/db?sslmode=require") == {"URL": "postgres://h/db?sslmode=require"}


def test_quotes():
    assert parse_env('MSG="hello world"\nX=\'a b\'') == {"MSG": "hello world", "X": "a b"}


def test_missing_equals():
    with pytest.raises(EnvSyntaxError, match="line 2"):
        parse_env("A=1\nnonsense\n")
