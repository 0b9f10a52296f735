"""Registers the namespace sandbox backend."""

from .. import hookimpl


@hookimpl
def agentenv_add_sandbox_backends(registry) -> None:
    from .namespace import NamespaceBackend

    registry.add_backend(NamespaceBackend)
