def moving_average(v, w):
    r = []
    for i in range(len(v) - w):
        s = 0
        for j in range(i, i + w): s += v[j]
        r.append(s / w)
    return r
