"""agentenv-docker: the ``docker`` sandbox backend (``gym.make(id, backend="docker")``).

See ``docs/docker.md``. Public names: :class:`DockerBackend`, :class:`DockerSandbox`,
:func:`reap_orphans`, and the image functions in :mod:`agentenv_docker.images`.
"""

__all__ = ["DockerBackend", "DockerSandbox", "reap_orphans"]


def __getattr__(name: str):
    # lazy: ``import agentenv`` loads this package's plugin module while agentenv itself is still
    # being imported, so nothing here may import agentenv at module level
    if name in __all__:
        from . import backend

        return getattr(backend, name)
    raise AttributeError(f"module 'agentenv_docker' has no attribute {name!r}")
