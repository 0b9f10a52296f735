import pytest

from semver import Version, latest


def test_parse_and_str_round_trip():
    for text in ("0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-rc.1+build.5", "2.0.0+meta"):
        assert str(Version.parse(text)) == text
    v = Version.parse("  1.2.3-beta.2+sha.9  ")
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == (1, 2, 3, ("beta", "2"), ("sha", "9"))


@pytest.mark.parametrize("bad", ["1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", "1.2.3-", "1.2.3-01",
                                 "1.2.3-a..b", ""])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        Version.parse(bad)


def test_leading_zero_only_refused_for_numeric_identifiers():
    assert Version.parse("1.0.0-0a").prerelease == ("0a",)
    assert Version.parse("1.0.0-0").prerelease == ("0",)


def test_ordering_from_the_spec():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]
    parsed = [Version.parse(v) for v in chain]
    for a, b in zip(parsed, parsed[1:]):
        assert a < b and a <= b and not b < a and not b <= a and not a == b
    assert sorted(reversed(parsed), key=Version._key) == parsed


def test_build_metadata_is_ignored_in_comparisons():
    assert Version.parse("1.0.0+a") == Version.parse("1.0.0+b")
    assert Version.parse("1.0.0+a") <= Version.parse("1.0.0")
    assert not Version.parse("1.0.0+a") < Version.parse("1.0.0")


def test_numeric_components_compare_as_numbers():
    assert Version.parse("1.9.0") < Version.parse("1.10.0")
    assert Version.parse("1.0.9") < Version.parse("1.0.10")
    assert Version.parse("9.0.0") < Version.parse("10.0.0")


def test_bump():
    v = Version.parse("1.2.3")
    assert str(v.bump("major")) == "2.0.0"
    assert str(v.bump("minor")) == "1.3.0"
    assert str(v.bump("patch")) == "1.2.4"
    assert str(Version.parse("1.2.3-rc.1").bump("patch")) == "1.2.3"
    assert str(Version.parse("1.2.3-rc.1").bump("minor")) == "1.3.0"
    with pytest.raises(ValueError, match="unknown part"):
        v.bump("build")


def test_latest():
    assert latest(["1.2.0", "1.10.0", "1.9.9"]) == "1.10.0"
    assert latest(["1.0.0", "2.0.0-rc.1"]) == "1.0.0"
    assert latest(["1.0.0", "2.0.0-rc.1"], include_prereleases=True) == "2.0.0-rc.1"
    assert latest(["2.0.0-rc.1"]) is None
    assert latest([]) is None
