import pytest
from tasks import Task, TaskQueue


def test_priority_order():
    q = TaskQueue()
    for n, p in [("b", 2), ("a", 1), ("c", 3)]:
        q.push(Task(n, p))
    assert [t.name for t in q.drain()] == ["a", "b", "c"]


def test_equal_priority_no_crash():
    q = TaskQueue()
    q.push(Task("x", 1)); q.push(Task("y", 1))
    assert len(q) == 2


def test_empty():
    with pytest.raises(IndexError):
        TaskQueue().pop()


def test_peek():
    q = TaskQueue()
    q.push(Task("only", 9))
    assert q.peek().name == "only" and len(q) == 1
