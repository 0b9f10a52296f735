from blog import SlugRegistry, slugify, unique_slug


def test_empty_fallback():
    assert slugify("!!!") == "post"


def test_max_length_no_trailing_hyphen():
    assert slugify("abc def ghi", max_length=4) == "abc"


def test_unique_sequence():
    reg = SlugRegistry()
    assert [unique_slug("Ça va?", reg) for _ in range(3)] == ["ca-va", "ca-va-2", "ca-va-3"]
