def discount(p):
    return p * 0.9
