import pytest

from paginator import Paginator, paginate


def test_validation():
    with pytest.raises(ValueError):
        Paginator(10, 0)
    with pytest.raises(ValueError):
        Paginator(-1)
    assert Paginator(0, 1).pages == 1


@pytest.mark.parametrize("total, per, pages", [(0, 20, 1), (1, 20, 1), (20, 20, 1), (21, 20, 2), (40, 20, 2),
                                               (41, 20, 3), (7, 3, 3), (9, 3, 3), (10, 1, 10)])
def test_page_count(total, per, pages):
    assert Paginator(total, per).pages == pages


def test_bounds():
    p = Paginator(45, 20)
    assert p.bounds(1) == (0, 20) and p.bounds(2) == (20, 40) and p.bounds(3) == (40, 45)
    assert Paginator(0).bounds(1) == (0, 0)
    for bad in (0, 4, -1):
        with pytest.raises(IndexError, match="out of 1..3"):
            p.bounds(bad)


def test_next_previous():
    p = Paginator(45, 20)
    assert p.has_next(1) and p.has_next(2) and not p.has_next(3)
    assert not p.has_previous(1) and p.has_previous(2) and p.has_previous(3)


def test_window():
    p = Paginator(200, 10)  # 20 pages
    assert p.window(1) == [1, 2, 3, None, 20]
    assert p.window(10) == [1, None, 8, 9, 10, 11, 12, None, 20]
    assert p.window(20) == [1, None, 18, 19, 20]
    assert p.window(4) == [1, 2, 3, 4, 5, 6, None, 20]
    assert p.window(5) == [1, 2, 3, 4, 5, 6, 7, None, 20]
    assert p.window(6) == [1, None, 4, 5, 6, 7, 8, None, 20]
    assert p.window(10, radius=0) == [1, None, 10, None, 20]
    assert Paginator(5, 10).window(1) == [1]
    assert Paginator(30, 10).window(2) == [1, 2, 3]
    with pytest.raises(IndexError):
        p.window(21)


def test_paginate():
    items = list(range(45))
    first = paginate(items, 1)
    assert first == {"items": list(range(20)), "page": 1, "pages": 3, "total": 45, "next": 2, "previous": None}
    last = paginate(items, 3)
    assert last["items"] == list(range(40, 45)) and last["next"] is None and last["previous"] == 2
    assert paginate([], 1) == {"items": [], "page": 1, "pages": 1, "total": 0, "next": None, "previous": None}
    assert paginate(items, 2, per_page=15)["items"] == list(range(15, 30))
