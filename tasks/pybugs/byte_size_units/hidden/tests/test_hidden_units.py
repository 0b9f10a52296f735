from diskquota import Quota, parse_size


def test_lowercase():
    assert parse_size("10mb") == 10_000_000
    assert parse_size("1.5 gb") == 1_500_000_000


def test_lowercase_binary():
    assert parse_size("4gib") == 4 * 2**30


def test_quota_binary():
    assert not Quota.from_text("1 KiB").would_exceed("1024")
