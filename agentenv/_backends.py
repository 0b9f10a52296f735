"""Choosing and sharing sandbox backends (one instance per name per process)."""

from __future__ import annotations

import atexit
import logging
import threading

from ._errors import BackendUnavailable
from ._plugins import registry
from ._sandbox import SandboxBackend

log = logging.getLogger("agentenv.sandbox")
_instances: dict[str, SandboxBackend] = {}
_lock = threading.Lock()


def choose_backend(name: str = "auto") -> str:
    """The backend name *name* stands for; ``auto`` takes the highest-priority available one."""
    reg = registry()
    if name != "auto":
        cls = reg.backend(name)
        ok = cls.availability()
        if not ok.ok:
            raise BackendUnavailable(f"sandbox backend {name!r} cannot run here: {ok.reason}")
        return name
    reasons = []
    for cls in sorted(reg.backends.values(), key=lambda c: -c.priority):
        ok = cls.availability()
        if ok.ok:
            others = "; ".join(reasons)
            log.info("backend='auto' chose %r (priority %d)%s", cls.name, cls.priority,
                     f" after skipping: {others}" if others else "")
            return cls.name
        reasons.append(f"{cls.name}: {ok.reason}")
    raise BackendUnavailable("no sandbox backend can run on this host, and agentenv never runs untrusted code "
                             "unconfined:\n  " + "\n  ".join(reasons))


def get_backend(name: str = "auto") -> SandboxBackend:
    """The shared instance of a backend (created on first use, closed at exit)."""
    real = choose_backend(name)
    with _lock:
        backend = _instances.get(real)
        if backend is None:
            backend = registry().backend(real)()
            _instances[real] = backend
        return backend


def close_backends() -> None:
    with _lock:
        backends = list(_instances.values())
        _instances.clear()
    for backend in backends:
        try:
            backend.close()
        except Exception:  # at exit: report, keep closing the others
            log.exception("closing backend %s", backend.name)


atexit.register(close_backends)
