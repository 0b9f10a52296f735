"""The plugin manager: a typed facade over pluggy, so core code never calls hooks untyped.

Loading is lazy: nothing is imported until the registry is first needed (``agentenv.registry()``,
``gym.make``, a CLI command). Then the built-in plugins (:data:`DEFAULT_PLUGINS`, named here as
pytest names its ``default_plugins``, so the kernel never imports ``agentenv.builtin``) are
registered, then every ``agentenv`` entry point unless ``AGENTENV_DISABLE_PLUGIN_AUTOLOAD`` is set,
skipping those named in ``AGENTENV_DISABLE_PLUGINS=name,...`` (like pytest's ``-p no:NAME``).

An entry point that fails to import is *broken*: it is skipped with a warning and listed by
``agentenv plugins`` with its cause, so one bad distribution does not break every command. An
entry point whose own package is still being imported (``import my_plugin`` ran ``import
agentenv``, which loads the plugins) is *pending*: importing it now would re-enter a half-imported
package, so it is loaded the next time the registry is asked for, once that import finished. A
plugin that fails inside a hook, or registers a name another plugin has, raises
:class:`PluginError` naming it (its half-made registrations cannot be taken back).

Hooks are collected in the order ``hookspecs`` declares them, and each implementation is called on
its own, in registration order, rather than through ``pm.hook.NAME(registry=...)``: pluggy's call
runs every implementation in one go, last registered first, and cannot tell which one raised. The
order matters (a suite's tasks name actions that must be registered) and so does the name in the
error.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pluggy

from . import hookspecs
from ._errors import AUTOLOAD_ENV, DISABLE_ENV, PluginError, UnknownNameError
from ._extension import (
    ActionType,
    AgentEntry,
    AgentFactory,
    Command,
    MetricInfo,
    MetricProvider,
    ReportFormat,
    RewardModel,
    Runtime,
)
from ._sandbox import SandboxBackend
from ._scheduler import Executor

log = logging.getLogger("agentenv.plugins")
ENTRY_POINT_GROUP = "agentenv"

#: the plugins that ship inside agentenv, registered before any entry point, in this order
DEFAULT_PLUGINS = (
    "agentenv.builtin.runtimes",
    "agentenv.builtin.namespace_plugin",
    "agentenv.builtin.executors",
    "agentenv.builtin.actions",
    "agentenv.builtin.reports",
    "agentenv.builtin.metrics",
    "agentenv.builtin.reward_models",
    "agentenv.builtin.suites",
    "agentenv.builtin.agents",
    "agentenv.builtin.agents_extra",
    "agentenv.builtin.cli",
    "agentenv.builtin.eval",
    "agentenv.builtin.audit",
    "agentenv.builtin.authoring",
    "agentenv.builtin.llm",
)


class Registry:
    """What the plugins registered. Handed to every ``agentenv_add_*`` hook."""

    def __init__(self) -> None:
        self.runtimes: list[Runtime] = []
        self.backends: dict[str, type[SandboxBackend]] = {}
        self.executors: dict[str, ExecutorEntry] = {}
        self.actions: dict[str, ActionType] = {}
        self.report_formats: dict[str, ReportFormat] = {}
        self.metric_providers: list[MetricProvider] = []
        self.metrics: dict[str, MetricInfo] = {}
        self.reward_models: dict[str, RewardModel] = {}
        self.suites: list[str] = []
        self.agents: dict[str, AgentEntry] = {}
        self.commands: dict[str, Command] = {}
        self.exporters: dict[str, Command] = {}
        self._current: str = "?"

    def _dup(self, kind: str, name: str) -> PluginError:
        return PluginError(f"plugin {self._current!r} registers {kind} {name!r}, which is already registered; "
                           f"disable one of them with {DISABLE_ENV}=NAME")

    def add_runtime(self, runtime: Runtime) -> None:
        re.compile(runtime.pattern)
        self.runtimes.append(runtime)

    def add_backend(self, backend: type[SandboxBackend]) -> None:
        if backend.name in self.backends:
            raise self._dup("backend", backend.name)
        self.backends[backend.name] = backend

    def add_executor(self, name: str, factory: Callable[..., Executor], help: str = "") -> None:
        if name in self.executors:
            raise self._dup("executor", name)
        self.executors[name] = ExecutorEntry(name, factory, help)

    def add_action(self, action: ActionType) -> None:
        if action.name in self.actions:
            raise self._dup("action", action.name)
        self.actions[action.name] = action

    def add_report_format(self, fmt: ReportFormat) -> None:
        if fmt.name in self.report_formats:
            raise self._dup("report format", fmt.name)
        self.report_formats[fmt.name] = fmt

    def add_metrics(self, provider: MetricProvider) -> None:
        for info in provider.metrics:
            if info.name in self.metrics:
                raise self._dup("metric", info.name)
            self.metrics[info.name] = info
        self.metric_providers.append(provider)

    def add_reward_model(self, model: RewardModel) -> None:
        if model.name in self.reward_models:
            raise self._dup("reward model", model.name)
        self.reward_models[model.name] = model

    def add_suite(self, path: str | os.PathLike[str]) -> None:
        self.suites.append(os.fspath(path))

    def add_agent(self, name: str, factory: AgentFactory, help: str = "") -> None:
        if name in self.agents:
            raise self._dup("agent", name)
        self.agents[name] = AgentEntry(name, factory, help)

    def add_exporter(self, name: str, help: str, configure: Callable[[Any], None], run: Callable[[Any], int]) -> None:
        if name in self.exporters:
            raise self._dup("export format", name)
        self.exporters[name] = Command(name, help, configure, run)

    def add_command(self, name: str, help: str, configure: Callable[[Any], None], run: Callable[[Any], int]) -> None:
        if name in self.commands:
            raise self._dup("command", name)
        self.commands[name] = Command(name, help, configure, run)

    # ---- lookups with "did you mean"
    def runtime_for(self, name: str) -> Runtime:
        for runtime in self.runtimes:
            if re.fullmatch(runtime.pattern, name):
                return runtime
        raise UnknownNameError("runtime", name, self.runtime_examples())

    def runtime_examples(self) -> list[str]:
        return [e for r in self.runtimes for e in r.examples]

    def action(self, name: str) -> ActionType:
        try:
            return self.actions[name]
        except KeyError:
            raise UnknownNameError("action", name, self.actions) from None

    def report_format(self, name: str) -> ReportFormat:
        try:
            return self.report_formats[name]
        except KeyError:
            raise UnknownNameError("report format", name, self.report_formats) from None

    def report_format_for(self, command: str) -> ReportFormat | None:
        """The first registered format that reads *command*'s report by itself, if any."""
        return next((f for f in self.report_formats.values() if f.matches(command)), None)

    def backend(self, name: str) -> type[SandboxBackend]:
        try:
            return self.backends[name]
        except KeyError:
            raise UnknownNameError("sandbox backend", name, self.backends) from None

    def executor(self, name: str) -> ExecutorEntry:
        try:
            return self.executors[name]
        except KeyError:
            raise UnknownNameError("executor", name, self.executors) from None

    def agent(self, name: str) -> AgentEntry:
        try:
            return self.agents[name]
        except KeyError:
            raise UnknownNameError("agent", name, self.agents) from None


@dataclass(frozen=True)
class ExecutorEntry:
    """A registered executor: ``factory(work, workers, address) -> Executor`` (see the hook)."""

    name: str
    factory: Callable[..., Executor]
    help: str = ""


@dataclass(frozen=True)
class PluginInfo:
    """A plugin the manager knows: loaded, disabled, or broken (with the reason)."""

    name: str
    distribution: str
    status: str  # "loaded", "disabled", "broken" or "pending"
    detail: str = ""


class PluginManager:
    """Loads the plugins (built-ins, then entry points) and asks each hook to fill a :class:`Registry`.

    One is built per process on first use (:func:`agentenv.get_plugin_manager`); build another
    (``PluginManager(autoload=False, plugins=[...])``) to see what a given set of plugins registers.
    """

    def __init__(self, autoload: bool | None = None, plugins: Iterable[Any] = (), *, wait: bool = True) -> None:
        """*plugins*: extra plugin objects registered after the built-ins (tests, embedding); *wait*:
        leave an entry point whose package is being imported for later (``pending``)."""
        self.pm = pluggy.PluginManager("agentenv")
        self.pm.add_hookspecs(hookspecs)
        self.registry = Registry()
        self.plugins: list[PluginInfo] = []
        disabled = disabled_plugins()
        for modname in DEFAULT_PLUGINS:
            if modname in disabled or modname.rpartition(".")[2] in disabled:
                self.plugins.append(PluginInfo(modname, "agentenv", "disabled", f"{DISABLE_ENV}"))
                continue
            self.pm.register(importlib.import_module(modname), name=modname)
            self.plugins.append(PluginInfo(modname, "agentenv", "loaded"))
        if autoload is None:
            autoload = not os.environ.get(AUTOLOAD_ENV)
        for i, plugin in enumerate(plugins):
            self.pm.register(plugin, name=getattr(plugin, "__name__", f"extra-{i}"))
            self.plugins.append(PluginInfo(self.pm.get_name(plugin), "?", "loaded"))
        if autoload:
            self._load_entry_points(disabled, wait)
        self._collect()

    @property
    def loaded(self) -> list[tuple[str, str]]:
        """(plugin name, distribution) of every loaded plugin, in registration order."""
        return [(p.name, p.distribution) for p in self.plugins if p.status == "loaded"]

    @property
    def broken(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.status == "broken"]

    @property
    def pending(self) -> list[PluginInfo]:
        """Entry points left for later because their package was being imported (see the module doc)."""
        return [p for p in self.plugins if p.status == "pending"]

    def _load_entry_points(self, disabled: frozenset[str], wait: bool) -> None:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if self.pm.has_plugin(ep.name):
                continue
            dist = ep.dist.name if ep.dist else "?"
            if ep.name in disabled or dist in disabled:
                self.plugins.append(PluginInfo(ep.name, dist, "disabled", DISABLE_ENV))
                continue
            if wait and _importing(ep.value):
                self.plugins.append(PluginInfo(ep.name, dist, "pending", "its package was being imported"))
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # one broken distribution must not break every command
                detail = f"failed to import {ep.value}: {type(exc).__name__}: {exc}"
                log.warning("plugin %r from distribution %r %s; skipped (fix or uninstall it, or set %s=%s)",
                            ep.name, dist, detail, DISABLE_ENV, ep.name)
                self.plugins.append(PluginInfo(ep.name, dist, "broken", detail))
                continue
            self.pm.register(plugin, name=ep.name)
            self.plugins.append(PluginInfo(ep.name, dist, "loaded"))

    def _collect(self) -> None:
        for hook in hook_names():
            caller = getattr(self.pm.hook, hook)
            for impl in reversed(caller.get_hookimpls()):  # registration order
                self.registry._current = impl.plugin_name
                try:
                    impl.function(registry=self.registry)
                except PluginError:
                    raise
                except Exception as exc:
                    raise PluginError(f"plugin {impl.plugin_name!r} failed in {hook}: {type(exc).__name__}: {exc}; "
                                      f"fix or uninstall it, or set {DISABLE_ENV}={impl.plugin_name}") from exc


def _importing(target: str) -> bool:
    """Whether the package of an entry point's module (``pkg.mod:attr``) is being imported right now."""
    module = sys.modules.get(target.split(":")[0].split(".")[0])
    return module is not None and bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def disabled_plugins() -> frozenset[str]:
    """Plugin or distribution names listed in ``AGENTENV_DISABLE_PLUGINS`` (comma-separated)."""
    return frozenset(n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip())


def hook_names() -> list[str]:
    """Every hook, in the order ``hookspecs`` declares them (the order plugins are asked)."""
    hooks = [(fn.__code__.co_firstlineno, name) for name, fn in vars(hookspecs).items()
             if name.startswith("agentenv_") and inspect.isfunction(fn)]
    return [name for _, name in sorted(hooks)]


_manager: PluginManager | None = None
_lock = threading.RLock()
#: called with the registry each time a plugin manager is built (gym registration listens here)
_listeners: list[Callable[[Registry], None]] = []


def on_registry(listener: Callable[[Registry], None]) -> None:
    """Call *listener* with the registry whenever one is built (now, if one is)."""
    with _lock:
        _listeners.append(listener)
        if _manager is not None:
            listener(_manager.registry)


def get_plugin_manager(*, complete: bool = False) -> PluginManager:
    """The process's plugin manager, built (and every plugin loaded) on first use.

    Pending plugins are loaded as soon as their packages are imported; *complete* loads them now
    (what a plugin package calls at the end of its ``__init__``, when its plugin module can load)."""
    global _manager
    with _lock:
        stale = _manager is not None and bool(_manager.pending) and (complete or not any(
            _importing(ep.value) for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
            if ep.name in {p.name for p in _manager.pending}))
        if _manager is None or stale:  # first use, or the packages of pending plugins are imported by now
            _manager = PluginManager(wait=not complete)
            for listener in _listeners:
                listener(_manager.registry)
        return _manager


def registry() -> Registry:
    """What the installed plugins registered (loads them on first use)."""
    return get_plugin_manager().registry


def loaded() -> bool:
    """Whether the plugins have been loaded in this process."""
    return _manager is not None


def reset_plugin_manager(autoload: bool | None = None) -> PluginManager:
    """Rebuild the plugin manager (tests, or after installing a plugin in a running process)."""
    global _manager
    with _lock:
        _manager = PluginManager(autoload)
        for listener in _listeners:
            listener(_manager.registry)
        return _manager
