"""Parse the fields of a crontab line into the sets of values they match, for the job scheduler."""

FIELDS = {"minute": (0, 59), "hour": (0, 23), "day": (1, 31), "month": (1, 12), "weekday": (0, 7)}  # Sunday is 0 or 7
NAMES = {"month": ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
         "weekday": ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]}


def _value(token, field):
    low, _ = FIELDS[field]
    names = NAMES.get(field)
    if names and token.lower() in names:
        return names.index(token.lower()) + low
    if not token.isdigit():
        raise ValueError(f"{field}: {token!r} is not a number")
    return int(token)


def parse_field(text, field):
    """The sorted list of values *text* ('*/15', '1-5', 'mon-fri', '1,15,30') matches in *field*."""
    if field not in FIELDS:
        raise ValueError(f"unknown field {field!r}")
    low, high = FIELDS[field]
    values = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"{field}: bad step {step_text!r}")
            step = int(step_text)
        if base == "*":
            start, stop = low, high
        elif "-" in base:
            a, _, b = base.partition("-")
            start, stop = _value(a, field), _value(b, field)
            if start > stop:
                raise ValueError(f"{field}: range {base!r} runs backwards")
        else:
            start = _value(base, field)
            stop = high if step_text else start
        if start < low or stop > high:
            raise ValueError(f"{field}: {part!r} is outside {low}-{high}")
        values.update(range(start, stop + 1, step))
    if field == "weekday" and 7 in values:
        values = (values - {7}) | {0}
    return sorted(values)


def parse_schedule(line):
    """The five fields of a crontab schedule as a dict of value lists."""
    parts = line.split()
    if len(parts) != 5:
        raise ValueError(f"expected 5 fields, found {len(parts)}")
    return {name: parse_field(part, name) for name, part in zip(FIELDS, parts)}
