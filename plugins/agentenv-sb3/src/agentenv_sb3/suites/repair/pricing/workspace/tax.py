def tax(p):
    return p + 20
