"""The Docker SDK, imported where it is first used.

The plugin's backend module is imported by every ``import agentenv`` (the backends are registered
then), and importing the SDK (``docker``, ``requests``, ``urllib3``) took ~70 ms of the ~400 ms that
``import agentenv`` costs a script that never opens a Docker sandbox. ``docker.X`` here imports the
SDK on first use and is the SDK's own ``X``."""

from __future__ import annotations

import importlib
from typing import Any


class _SDK:
    def __getattr__(self, name: str) -> Any:
        sdk = importlib.import_module("docker")
        for part in ("errors", "types"):  # (submodules the plugin names as attributes)
            importlib.import_module(f"docker.{part}")
        return getattr(sdk, name)


docker: Any = _SDK()
