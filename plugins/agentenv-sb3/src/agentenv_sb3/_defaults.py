"""Defaults shared by the CLI and the library. Nothing heavy is imported here, so that building the
``agentenv`` command line (which reads them for ``--help``) does not import torch."""

DEFAULT_MAX_TOKENS = 7  # the token wrapper's program length limit
