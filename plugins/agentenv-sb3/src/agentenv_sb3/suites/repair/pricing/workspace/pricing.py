from discount import discount
from tax import tax


def total(p):
    return round(tax(discount(p)), 2)
