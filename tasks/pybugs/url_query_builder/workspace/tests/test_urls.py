from webutil import build_query, build_url


def test_simple():
    assert build_url("https://x.io/s", {"page": 2}) == "https://x.io/s?page=2"


def test_no_params():
    assert build_url("https://x.io/s") == "https://x.io/s"


def test_escaping():
    assert build_query({"q": "fish & chips"}) == "q=fish%20%26%20chips"


def test_lists():
    assert build_query({"tag": ["a", "b"]}) == "tag=a&tag=b"
