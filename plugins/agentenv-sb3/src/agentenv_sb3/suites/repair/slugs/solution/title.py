def title(s):
    return ' '.join(w.capitalize() for w in s.split())
