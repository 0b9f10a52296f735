from envfile import parse_env


def test_comments_and_export():
    text = "# db settings\nexport HOST=db\n\n  # indented comment\nPORT=5432 # default\n"
    assert parse_env(text) == {"HOST": "db", "PORT": "5432"}


def test_hash_inside_quotes():
    assert parse_env('PASS="a#b"') == {"PASS": "a#b"}


def test_newline_escape():
    assert parse_env('T="l1\\nl2"') == {"T": "l1\nl2"}
