from span import span


def test_span_short():
    assert span(1, 3) == [1, 2, 3]


def test_span_single():
    assert span(4, 4) == [4]


def test_span_empty():
    assert span(5, 4) == []
