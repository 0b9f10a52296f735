def span(a, b):
    return list(range(a, b))
