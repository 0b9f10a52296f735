"""payments package."""
from payments.luhn import check_digit, checksum, is_valid
from payments.cleaning import normalize_number
