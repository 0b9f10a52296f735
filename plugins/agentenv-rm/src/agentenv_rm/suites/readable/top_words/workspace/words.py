def top_words(t, n):
    d = {}
    for x in t.split():
        x = x.lower()
        if x in d: d[x] = d[x] + 1
        else: d[x] = 1
    l = list(d.items())
    l.sort(key=lambda a: -a[1])
    return l[:n]
