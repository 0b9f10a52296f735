"""blog package."""
from blog.slugs import slugify, unique_slug
from blog.registry import SlugRegistry
