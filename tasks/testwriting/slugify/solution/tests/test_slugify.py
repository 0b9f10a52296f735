import pytest

from slugify import slugify, transliterate, unique_slug


def test_transliterate():
    assert transliterate("Crème Brûlée") == "Creme Brulee"
    assert transliterate("Straße") == "Strasse"
    assert transliterate("Ærø Łódź") == "aero Lodz"
    assert transliterate("Øre") == "Ore"
    assert transliterate("Œuvre") == "oeuvre"
    assert transliterate("fish & chips") == "fish  and  chips"
    assert transliterate("日本") == ""
    assert transliterate("abc") == "abc"


def test_basic_slugs():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Crème   Brûlée Recipe!!  ") == "creme-brulee-recipe"
    assert slugify("Fish & Chips") == "fish-and-chips"
    assert slugify("Python 3.11 released") == "python-3-11-released"
    assert slugify("") == ""


def test_separator():
    assert slugify("a b c", separator="_") == "a_b_c"
    assert slugify("a b", separator="--") == "a--b"
    for bad in ("", "x", "1"):
        with pytest.raises(ValueError):
            slugify("a b", separator=bad)


def test_stopwords_unless_nothing_is_left():
    assert slugify("The Art of War", stopwords={"the", "of"}) == "art-war"
    assert slugify("The Of", stopwords={"the", "of"}) == "the-of"


def test_max_length_cuts_at_word_boundaries():
    assert slugify("alpha beta gamma", max_length=10) == "alpha-beta"
    assert slugify("alpha beta gamma", max_length=11) == "alpha-beta"
    assert slugify("alpha beta gamma", max_length=9) == "alpha"
    assert slugify("alpha beta gamma", max_length=16) == "alpha-beta-gamma"
    assert slugify("supercalifragilistic word", max_length=5) == "super"
    assert slugify("ab cd", max_length=5) == "ab-cd"


def test_unique_slug():
    assert unique_slug("My Post", set()) == "my-post"
    assert unique_slug("My Post", {"my-post"}) == "my-post-2"
    assert unique_slug("My Post", {"my-post", "my-post-2", "my-post-3"}) == "my-post-4"
    assert unique_slug("My Post", {"my_post"}, separator="_") == "my_post_2"
    assert unique_slug("My Post", {"my-post-2"}) == "my-post"
