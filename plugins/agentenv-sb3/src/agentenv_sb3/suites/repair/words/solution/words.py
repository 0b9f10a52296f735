def count_words(text):
    out = {}
    for w in text.lower().split():
        out[w] = out.get(w, 0) + 1
    return out
