def f(a, b):
    return a * 2
