from payments import check_digit, is_valid


def test_odd_length_invalid():
    assert not is_valid("378282246310006")


def test_check_digit():
    assert check_digit("7992739871") == 3
    assert check_digit("37828224631000") == 5


def test_short_numbers():
    assert is_valid("059") and not is_valid("0")
