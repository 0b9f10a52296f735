from webutil import build_query, build_url


def test_none_dropped():
    assert build_query({"a": None, "b": 1}) == "b=1"


def test_existing_query():
    assert build_url("https://x.io/s?lang=en", {"q": "a/b"}) == "https://x.io/s?lang=en&q=a%2Fb"


def test_bool_and_unicode():
    assert build_query({"flag": True, "name": "Zoë"}) == "flag=true&name=Zo%C3%AB"
