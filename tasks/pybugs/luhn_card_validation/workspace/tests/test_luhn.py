from payments import is_valid


def test_visa():
    assert is_valid("4111111111111111")


def test_amex_odd_length():
    assert is_valid("378282246310005")


def test_formatted():
    assert is_valid("4111 1111-1111 1111")


def test_garbage():
    assert not is_valid("4111a11111111111") and not is_valid("")
