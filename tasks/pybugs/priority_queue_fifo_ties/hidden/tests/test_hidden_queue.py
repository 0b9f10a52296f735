from tasks import Task, TaskQueue


def test_fifo_among_equal():
    q = TaskQueue()
    for i in range(20):
        q.push(Task("t%d" % i, i % 2))
    names = [t.name for t in q.drain()]
    assert names == ["t%d" % i for i in range(0, 20, 2)] + ["t%d" % i for i in range(1, 20, 2)]


def test_interleaved():
    q = TaskQueue()
    q.push(Task("a", 5)); q.push(Task("b", 5))
    assert q.pop().name == "a"
    q.push(Task("c", 5))
    assert [q.pop().name, q.pop().name] == ["b", "c"]
