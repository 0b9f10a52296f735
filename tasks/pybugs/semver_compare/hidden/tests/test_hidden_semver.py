from versions import Version, compare


def test_prerelease_before_release():
    assert compare("2.0.0-rc.1", "2.0.0") == -1


def test_prerelease_numeric():
    assert compare("1.0.0-alpha.2", "1.0.0-alpha.10") == -1
    assert compare("1.0.0-alpha.beta", "1.0.0-alpha.1") == 1


def test_build_ignored():
    assert compare("1.0.0+build.5", "1.0.0") == 0
    assert Version("1.0.0+a") == Version("1.0.0+b")


def test_spec_order():
    order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
             "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    assert sorted(reversed(order), key=Version) == order
