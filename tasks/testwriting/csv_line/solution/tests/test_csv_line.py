import pytest

from csv_line import CSVError, format_line, parse_line


def test_plain_fields():
    assert parse_line("a,b,c") == ["a", "b", "c"]
    assert parse_line("") == [""]
    assert parse_line(",") == ["", ""]
    assert parse_line("a,,c,") == ["a", "", "c", ""]
    assert parse_line(" a , b") == [" a ", " b"]


def test_quoted_fields():
    assert parse_line('"a,b",c') == ["a,b", "c"]
    assert parse_line('"say ""hi""",x') == ['say "hi"', "x"]
    assert parse_line('""') == [""]
    assert parse_line('x,""') == ["x", ""]
    assert parse_line('"a"') == ["a"]
    assert parse_line('""""') == ['"']


def test_other_delimiters():
    assert parse_line("a;b,c", delimiter=";") == ["a", "b,c"]
    assert parse_line('"a;b";c', delimiter=";") == ["a;b", "c"]
    for bad in ("", ";;", '"'):
        with pytest.raises(ValueError):
            parse_line("a", delimiter=bad)


def test_errors_name_the_column():
    with pytest.raises(CSVError, match="unterminated"):
        parse_line('"abc')
    with pytest.raises(CSVError, match="column 4"):
        parse_line('"a"b,c')
    with pytest.raises(CSVError, match="column 3"):
        parse_line('ab"c"')
    assert issubclass(CSVError, ValueError)


def test_format_line_quotes_only_when_needed():
    assert format_line(["a", "b"]) == "a,b"
    assert format_line(["a,b", 'say "hi"', 3]) == '"a,b","say ""hi""",3'
    assert format_line(["line\nbreak", "cr\r"]) == '"line\nbreak","cr\r"'
    assert format_line([" pad", "x "]) == '" pad","x "'
    assert format_line(["a;b", "c,d"], delimiter=";") == '"a;b";c,d'
    assert format_line([]) == ""
    assert format_line([""]) == ""


def test_round_trip():
    rows = [["plain", "with,comma", 'with "quotes"', " spaced ", ""], ['"', ",", "a\nb"]]
    for row in rows:
        assert parse_line(format_line(row)) == row
