"""Defaults shared by the CLI and the library; no imports, so the CLI hook can read them while
``import agentenv`` is still running."""

DEFAULT_MAX_TOKENS = 7  # the token wrapper's program length limit
