"""Moving averages of a series of numbers."""


def moving_average(values, window):
    """The mean of every run of `window` consecutive values, in order.

    Raises ValueError for a window that is not positive.
    """
    if window <= 0:
        raise ValueError(f"window must be positive, not {window}")
    averages = []
    for start in range(len(values) - window + 1):
        averages.append(sum(values[start:start + window]) / window)
    return averages
