def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0
