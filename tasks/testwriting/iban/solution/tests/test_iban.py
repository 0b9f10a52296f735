import pytest

from iban import check_digits, checksum, format_iban, is_valid, normalize, validate

VALID = ["DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300",
         "BE68539007547034", "CH9300762011623852957", "AT611904300234573201", "ES9121000418450200051332",
         "IT60X0542811101000000123456", "IE29AIBK93115212345678"]


@pytest.mark.parametrize("iban", VALID)
def test_valid_ibans(iban):
    assert validate(iban) == iban and is_valid(iban) and checksum(iban) == 1


def test_normalize_and_spaces():
    assert normalize("de89 3704 0044 0532 0130 00") == "DE89370400440532013000"
    assert validate(" de89 3704 0044 0532 0130 00 ") == "DE89370400440532013000"


@pytest.mark.parametrize("bad, message", [
    ("DE88370400440532013000", "check digits"), ("DE8937040044053201300", "22 characters, not 21"),
    ("XX89370400440532013000", "unsupported country XX"), ("D189370400440532013000", "country code"),
    ("DEAB370400440532013000", "country code"), ("DE89-3704-0044", "only letters and digits"), ("DE8", "country code"),
    ("", "country code"), ("GB82WEST1234569876543Z", "check digits")])
def test_invalid(bad, message):
    with pytest.raises(ValueError, match=message):
        validate(bad)
    assert not is_valid(bad)


def test_format():
    assert format_iban("DE89370400440532013000") == "DE89 3704 0044 0532 0130 00"
    assert format_iban("BE68539007547034", group=8) == "BE685390 07547034"
    with pytest.raises(ValueError):
        format_iban("DE00")


def test_check_digits():
    assert check_digits("DE", "370400440532013000") == "89"
    assert check_digits("gb", "west12345698765432") == "82"
    assert check_digits("BE", "539007547034") == "68"
    assert check_digits("NL", "ABNA0417164300") == "91"
    assert check_digits("CH", "00762011623852957") == "93"
