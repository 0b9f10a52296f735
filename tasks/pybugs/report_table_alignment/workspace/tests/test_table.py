from textreport import column_widths, format_cell, render_table


def test_format_cell():
    assert format_cell(1.5) == "1.50"
    assert format_cell(None) == ""


def test_widths_from_header():
    assert column_widths(["name", "qty"], [["ab", 1]]) == [4, 3]


def test_widths_from_values():
    assert column_widths(["n"], [["apple"], ["kiwi"]]) == [5]


def test_render():
    out = render_table(["item", "qty"], [["apple", 3], ["kiwi", 12]])
    assert out.splitlines() == [
        "+-------+-----+",
        "| item  | qty |",
        "+-------+-----+",
        "| apple |   3 |",
        "| kiwi  |  12 |",
        "+-------+-----+",
    ]
