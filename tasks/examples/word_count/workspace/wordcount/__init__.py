from .core import top_words

__all__ = ["top_words"]
