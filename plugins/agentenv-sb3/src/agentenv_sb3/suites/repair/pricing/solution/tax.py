def tax(p):
    return p * 1.2
