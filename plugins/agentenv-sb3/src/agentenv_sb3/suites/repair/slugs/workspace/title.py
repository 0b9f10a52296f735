def title(s):
    return s.capitalize()
