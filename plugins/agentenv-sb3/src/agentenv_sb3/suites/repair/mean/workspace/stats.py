def mean(xs):
    return sum(xs) // len(xs)
