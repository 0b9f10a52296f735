"""IBAN validation and formatting (ISO 13616) for the payouts form."""

import string

LENGTHS = {"AT": 20, "BE": 16, "CH": 21, "DE": 22, "ES": 24, "FR": 27, "GB": 22, "IE": 22, "IT": 27, "NL": 18}


def normalize(text):
    """Upper case without spaces; other separators are not accepted."""
    return text.replace(" ", "").upper()


def checksum(iban):
    """The ISO 7064 mod-97 remainder of the rearranged IBAN (1 for a valid one)."""
    rearranged = iban[4:] + iban[:4]
    digits = "".join(str(int(ch, 36)) for ch in rearranged)
    remainder = 0
    for i in range(0, len(digits), 9):
        remainder = int(str(remainder) + digits[i:i + 9]) % 97
    return remainder


def validate(text):
    """The normalized IBAN, or ValueError saying what is wrong."""
    iban = normalize(text)
    if len(iban) < 5 or not iban[:2].isalpha() or not iban[2:4].isdigit():
        raise ValueError("an IBAN starts with a country code and two check digits")
    if any(ch not in string.ascii_uppercase + string.digits for ch in iban):
        raise ValueError("an IBAN holds only letters and digits")
    expected = LENGTHS.get(iban[:2])
    if expected is None:
        raise ValueError(f"unsupported country {iban[:2]}")
    if len(iban) != expected:
        raise ValueError(f"a {iban[:2]} IBAN has {expected} characters, not {len(iban)}")
    if checksum(iban) != 1:
        raise ValueError("the check digits do not match")
    return iban


def is_valid(text):
    try:
        validate(text)
    except ValueError:
        return False
    return True


def format_iban(text, group=4):
    """'DE89 3704 0044 0532 0130 00': groups of *group* characters."""
    iban = validate(text)
    return " ".join(iban[i:i + group] for i in range(0, len(iban), group))


def check_digits(country, bban):
    """The two check digits that make country + digits + bban a valid IBAN."""
    value = checksum(country.upper() + "00" + bban.upper())
    return f"{98 - value:02d}"
