from textreport import render_table


def test_all_lines_same_width():
    out = render_table(["a", "b"], [["a much longer value", 1.25], [None, 1000000]])
    lines = out.splitlines()
    assert len({len(line) for line in lines}) == 1


def test_float_right_aligned():
    out = render_table(["price"], [[3.5], [12.0]])
    assert out.splitlines()[3] == "|  3.50 |"
    assert out.splitlines()[4] == "| 12.00 |"


def test_bool_left_aligned():
    out = render_table(["flag"], [[True]])
    assert out.splitlines()[3] == "| True |"
