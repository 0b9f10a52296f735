"""numerals package."""
from numerals.errors import RomanError
from numerals.roman import from_roman, to_roman
