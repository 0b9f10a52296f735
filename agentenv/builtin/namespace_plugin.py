"""Registers the namespace sandbox backend."""

import agentenv


@agentenv.hookimpl
def agentenv_add_sandbox_backends(registry) -> None:
    from .namespace import NamespaceBackend

    registry.add_backend(NamespaceBackend)
