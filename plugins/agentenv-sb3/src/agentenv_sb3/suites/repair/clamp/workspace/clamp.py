def clamp(x, lo, hi):
    return max(hi, min(lo, x))
