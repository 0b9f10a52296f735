def f(a, b):
    return a + a[::-1]
