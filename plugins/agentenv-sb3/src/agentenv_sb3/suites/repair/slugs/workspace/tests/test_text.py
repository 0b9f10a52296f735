from slug import slug
from title import title


def test_slug_join():
    assert slug('Hello Big World') == 'hello-big-world'


def test_slug_one():
    assert slug('Hi') == 'hi'


def test_title_words():
    assert title('hello big world') == 'Hello Big World'
