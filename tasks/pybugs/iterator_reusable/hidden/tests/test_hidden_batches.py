import pytest
from dataset import Batches, StridedSampler


def test_len_matches_iteration():
    for n in range(0, 12):
        for size in (1, 3, 5):
            for drop in (False, True):
                b = Batches(list(range(n)), size, drop_last=drop)
                assert len(b) == len(list(b))


def test_independent_iterators():
    b = Batches(list(range(4)), 2)
    it1, it2 = iter(b), iter(b)
    assert next(it1) == [0, 1]
    assert next(it2) == [0, 1]


def test_not_an_iterator():
    with pytest.raises(TypeError):
        next(Batches([1, 2], 1))


def test_sampler_reused():
    b = Batches(list("abcde"), 2, sampler=StridedSampler(5))
    assert list(b) == [["a", "c"], ["e", "b"], ["d"]]
    assert list(b) == [["a", "c"], ["e", "b"], ["d"]]
