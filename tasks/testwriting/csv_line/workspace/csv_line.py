"""Parse and format one CSV record (RFC 4180 quoting) for the export importer, without the csv module."""


class CSVError(ValueError):
    pass


def parse_line(line, delimiter=","):
    """Fields of one record. Quoted fields may hold the delimiter and doubled quotes."""
    if len(delimiter) != 1 or delimiter == '"':
        raise ValueError("the delimiter must be one character other than a quote")
    fields, field = [], []
    i, n = 0, len(line)
    quoted = False
    while i < n:
        ch = line[i]
        if quoted:
            if ch == '"':
                if i + 1 < n and line[i + 1] == '"':
                    field.append('"')
                    i += 1
                else:
                    quoted = False
                    if i + 1 < n and line[i + 1] != delimiter:
                        raise CSVError(f"unexpected character after a closing quote at column {i + 2}")
            else:
                field.append(ch)
        elif ch == '"':
            if field:
                raise CSVError(f"a quote inside an unquoted field at column {i + 1}")
            quoted = True
        elif ch == delimiter:
            fields.append("".join(field))
            field = []
        else:
            field.append(ch)
        i += 1
    if quoted:
        raise CSVError("unterminated quoted field")
    fields.append("".join(field))
    return fields


def format_line(fields, delimiter=","):
    """One record; a field is quoted only when it must be."""
    out = []
    for value in fields:
        text = str(value)
        if any(c in text for c in (delimiter, '"', "\n", "\r")) or text != text.strip():
            text = '"' + text.replace('"', '""') + '"'
        out.append(text)
    return delimiter.join(out)
