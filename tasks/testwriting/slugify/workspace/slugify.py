"""URL slugs for blog posts: transliterated, lower-case, separated, bounded in length."""

import re
import unicodedata

_SPECIAL = {"ß": "ss", "æ": "ae", "ø": "o", "œ": "oe", "ł": "l", "đ": "d", "&": " and "}


def transliterate(text):
    """Replace accented and special letters by ASCII ones; drop what has no ASCII form."""
    out = []
    for ch in text:
        low = ch.lower()
        if low in _SPECIAL:
            rep = _SPECIAL[low]
            out.append(rep.upper() if ch != low and len(rep) == 1 else rep)
            continue
        decomposed = unicodedata.normalize("NFKD", ch)
        out.append("".join(c for c in decomposed if ord(c) < 128))
    return "".join(out)


def slugify(text, separator="-", max_length=60, stopwords=()):
    if not separator or separator.isalnum():
        raise ValueError("the separator must be a non-empty, non-alphanumeric string")
    words = re.findall(r"[a-z0-9]+", transliterate(text).lower())
    words = [w for w in words if w not in stopwords] or words
    slug = ""
    for word in words:
        candidate = word if not slug else slug + separator + word
        if len(candidate) > max_length:
            if not slug:
                slug = word[:max_length]
            break
        slug = candidate
    return slug


def unique_slug(text, taken, **options):
    """A slug not in *taken*: the plain slug, else slug-2, slug-3, ..."""
    base = slugify(text, **options)
    if base not in taken:
        return base
    sep = options.get("separator", "-")
    n = 2
    while f"{base}{sep}{n}" in taken:
        n += 1
    return f"{base}{sep}{n}"
