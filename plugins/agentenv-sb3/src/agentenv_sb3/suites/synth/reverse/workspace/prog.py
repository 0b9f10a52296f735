def f(a, b):
    return None
