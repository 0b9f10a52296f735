"""The plugin manager: a typed facade over pluggy, so core code never calls hooks untyped.

Built-in plugins (``agentenv.builtin.DEFAULT_PLUGINS``) are registered first, then every
``agentenv`` entry point unless ``AGENTENV_DISABLE_PLUGIN_AUTOLOAD`` is set. An entry point that
fails to import raises :class:`PluginError` naming the plugin and its distribution.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import re
import threading
from typing import Any, Iterable

import pluggy

from . import hookspecs
from ._errors import PluginError, UnknownNameError
from ._extension import (
    ActionType,
    AgentEntry,
    Command,
    MetricInfo,
    MetricProvider,
    RewardModel,
    Runtime,
)
from ._sandbox import SandboxBackend

log = logging.getLogger("agentenv.plugins")
ENTRY_POINT_GROUP = "agentenv"
AUTOLOAD_ENV = "AGENTENV_DISABLE_PLUGIN_AUTOLOAD"


class Registry:
    """What the plugins registered. Handed to every ``agentenv_add_*`` hook."""

    def __init__(self) -> None:
        self.runtimes: list[Runtime] = []
        self.backends: dict[str, type[SandboxBackend]] = {}
        self.actions: dict[str, ActionType] = {}
        self.metric_providers: list[MetricProvider] = []
        self.metrics: dict[str, MetricInfo] = {}
        self.reward_models: dict[str, RewardModel] = {}
        self.suites: list[str] = []
        self.agents: dict[str, AgentEntry] = {}
        self.commands: dict[str, Command] = {}
        self._current: str = "?"

    def _dup(self, kind: str, name: str) -> PluginError:
        return PluginError(f"plugin {self._current!r} registers {kind} {name!r}, which is already registered")

    def add_runtime(self, runtime: Runtime) -> None:
        re.compile(runtime.pattern)
        self.runtimes.append(runtime)

    def add_backend(self, backend: type[SandboxBackend]) -> None:
        if backend.name in self.backends:
            raise self._dup("backend", backend.name)
        self.backends[backend.name] = backend

    def add_action(self, action: ActionType) -> None:
        if action.name in self.actions:
            raise self._dup("action", action.name)
        self.actions[action.name] = action

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

    def add_agent(self, name: str, factory: Any, help: str = "") -> None:
        if name in self.agents:
            raise self._dup("agent", name)
        self.agents[name] = AgentEntry(name, factory, help)

    def add_command(self, name: str, help: str, configure: Any, run: Any) -> None:
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

    def backend(self, name: str) -> type[SandboxBackend]:
        try:
            return self.backends[name]
        except KeyError:
            raise UnknownNameError("sandbox backend", name, self.backends) from None

    def agent(self, name: str) -> AgentEntry:
        try:
            return self.agents[name]
        except KeyError:
            raise UnknownNameError("agent", name, self.agents) from None


class PluginManager:
    def __init__(self, autoload: bool | None = None, plugins: Iterable[Any] = ()) -> None:
        """*plugins*: extra plugin objects registered after the built-ins (tests, embedding)."""
        self.pm = pluggy.PluginManager("agentenv")
        self.pm.add_hookspecs(hookspecs)
        self.registry = Registry()
        self.loaded: list[tuple[str, str]] = []  # (plugin name, distribution)
        from .builtin import DEFAULT_PLUGINS

        for modname in DEFAULT_PLUGINS:
            self.pm.register(importlib.import_module(modname), name=modname)
            self.loaded.append((modname, "agentenv"))
        if autoload is None:
            autoload = not os.environ.get(AUTOLOAD_ENV)
        for i, plugin in enumerate(plugins):
            self.pm.register(plugin, name=getattr(plugin, "__name__", f"extra-{i}"))
            self.loaded.append((self.pm.get_name(plugin), "?"))
        if autoload:
            self._load_entry_points()
        self._collect()

    def _load_entry_points(self) -> None:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if self.pm.has_plugin(ep.name):
                continue
            dist = ep.dist.name if ep.dist else "?"
            try:
                plugin = ep.load()
            except Exception as exc:
                raise PluginError(
                    f"plugin {ep.name!r} from distribution {dist!r} failed to import ({ep.value}): "
                    f"{type(exc).__name__}: {exc}; fix or uninstall it, or set {AUTOLOAD_ENV}=1"
                ) from exc
            self.pm.register(plugin, name=ep.name)
            self.loaded.append((ep.name, dist))

    def _collect(self) -> None:
        hooks = ("agentenv_add_runtimes", "agentenv_add_sandbox_backends", "agentenv_add_actions",
                 "agentenv_add_metrics", "agentenv_add_reward_models", "agentenv_add_task_suites",
                 "agentenv_add_agents", "agentenv_add_cli_commands")
        for hook in hooks:
            caller = getattr(self.pm.hook, hook)
            for impl in reversed(caller.get_hookimpls()):  # registration order
                self.registry._current = impl.plugin_name
                try:
                    impl.function(registry=self.registry)
                except PluginError:
                    raise
                except Exception as exc:
                    raise PluginError(f"plugin {impl.plugin_name!r} failed in {hook}: "
                                      f"{type(exc).__name__}: {exc}") from exc


_manager: PluginManager | None = None
_lock = threading.RLock()


def get_plugin_manager() -> PluginManager:
    global _manager
    with _lock:
        if _manager is None:
            _manager = PluginManager()
        return _manager


def registry() -> Registry:
    return get_plugin_manager().registry


def reset_plugin_manager(autoload: bool | None = None) -> PluginManager:
    """Rebuild the plugin manager (tests, or after installing a plugin in a running process)."""
    global _manager
    with _lock:
        _manager = PluginManager(autoload)
        return _manager


def hook_names() -> Iterable[str]:
    return sorted(n for n in dir(hookspecs) if n.startswith("agentenv_"))
