"""URL slugs."""
from __future__ import annotations

import re
import unicodedata

from blog.registry import SlugRegistry

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(title: str, max_length: int = 60) -> str:
    """Lowercase ASCII slug: accents stripped, runs of other chars become one hyphen."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _NON_ALNUM.sub("-", ascii_text.lower()).strip("-")
    return slug[:max_length].rstrip("-") or "post"


def unique_slug(title: str, registry: SlugRegistry) -> str:
    base = slugify(title)
    slug, n = base, 2
    while slug in registry:
        slug = f"{base}-{n}"
        n += 1
    registry.add(slug)
    return slug
