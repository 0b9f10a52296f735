def discount(p):
    return p * 1.1
