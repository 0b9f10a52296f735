"""Every extension point of agentenv, with its contract.

A plugin is a module (or object) with functions named like the hooks below, decorated with
``agentenv.hookimpl``, published under the ``agentenv`` entry-point group::

    [project.entry-points.agentenv]
    my_plugin = "my_package.plugin"

Each hook receives a typed registry (:class:`agentenv.Registry`) and adds things to it; none
returns a value (so "first non-None result wins" never applies). Hooks are called once each, in
the order this module declares them, when the plugins are first needed (the first ``gym.make``,
``agentenv.registry()`` or CLI command). Built-in plugins in ``agentenv.builtin`` are registered
through these same hooks. A plugin module may ``import agentenv`` at its top: loading is lazy.
``docs/plugins.md`` has a complete example of each hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ._plugins import Registry

hookspec = pluggy.HookspecMarker("agentenv")


# --------------------------------------------------------------------------- execution

@hookspec
def agentenv_add_runtimes(registry: "Registry") -> None:
    """Add runtimes with ``registry.add_runtime(runtime)``.

    A :class:`agentenv.Runtime` claims runtime names (``python3.11``, ``shell``) through a regex
    ``pattern`` and prepares a :class:`agentenv.RuntimeEnv` (host paths to mount read-only, the
    process environment, a fingerprint) for a task's ``environment_config``. Called once.
    """


@hookspec
def agentenv_add_sandbox_backends(registry: "Registry") -> None:
    """Add sandbox backends with ``registry.add_backend(backend_class)``.

    A :class:`agentenv.SandboxBackend` subclass with a unique ``name``, a ``priority`` (highest
    available wins for ``backend="auto"``) and ``availability()``. Called once.
    """


@hookspec
def agentenv_add_executors(registry: "Registry") -> None:
    """Add episode executors with ``registry.add_executor(name, factory, help)``.

    An executor runs the scheduler's episodes somewhere (:class:`agentenv.Executor`): ``local``
    (threads in this process) is built in, ``ray`` comes with ``agentenv-ray``.
    ``factory(work, workers, address) -> Executor``, where *work* is the episode callable
    (:class:`agentenv.EpisodeWork`), *workers* the number of concurrent episodes (None: the
    executor's own default) and *address* where to find the cluster (None: start or find a local
    one). ``agentenv eval --executor NAME [--address ADDR]`` picks one. Called once.
    """


# --------------------------------------------------------------------------- the episode

@hookspec
def agentenv_add_actions(registry: "Registry") -> None:
    """Add action types with ``registry.add_action(action)``.

    An :class:`agentenv.ActionType` has a ``name`` (the ``"action"`` field of an action object), a
    JSON Schema for its other fields (merged into ``schemas/task.schema.json``) and
    ``execute(ctx, action) -> ActionOutcome``. Called once.
    """


@hookspec
def agentenv_add_report_formats(registry: "Registry") -> None:
    """Add report formats with ``registry.add_report_format(fmt)``.

    A :class:`agentenv.ReportFormat` reads the verdict of a scored ``run_command`` step: it
    instruments the command (where its report goes, the files and environment the run needs),
    parses the report into a :class:`agentenv.TestReport` (per-test outcomes or a score, and how far
    to trust them) and may list the tests a run must cover. A step names one with ``"report":
    {"format": NAME}``, or the first format whose ``matches(command)`` is true is used (pytest's
    trusted judge for pytest commands). Called once.
    """


@hookspec
def agentenv_add_metrics(registry: "Registry") -> None:
    """Add metric providers with ``registry.add_metrics(provider)``.

    A :class:`agentenv.MetricProvider` declares the metrics it produces (name, direction, whether
    the value is a noisy measurement) and computes them from one command's
    :class:`agentenv.RunContext` (its result, its parsed report, the files the agent changed).
    Reward rules name these metrics. Called once.
    """


@hookspec
def agentenv_add_reward_models(registry: "Registry") -> None:
    """Add reward models with ``registry.add_reward_model(model)``.

    A :class:`agentenv.RewardModel` is a fuzzy scorer: given the episode's final files, the
    reference solution and the scored runs, it returns a score in [0, 1]. A rule uses one with
    ``{"reward_model": NAME, "weight": W}``. Called once.
    """


# --------------------------------------------------------------------------- data and tools

@hookspec
def agentenv_add_task_suites(registry: "Registry") -> None:
    """Add task suites with ``registry.add_suite(path)``: a directory holding ``suite.json``.

    Every task of every suite is registered as ``agentenv/<task_id>-v<version>`` on
    ``import agentenv``. Called once.
    """


@hookspec
def agentenv_add_exporters(registry: "Registry") -> None:
    """Add formats for ``agentenv export SOURCE --format NAME [--out PATH]`` with
    ``registry.add_exporter(name, help, configure, run)``.

    ``configure(group)`` adds the format's own options to an ``argparse`` argument group (the
    command already has ``source``, ``--format`` and ``--out``); ``run(args) -> int`` writes
    ``args.source`` (a suite, a task, an eval run: whatever the format reads) to ``args.out`` and
    returns the exit status. Built in: ``harbor`` (task folders), ``chat`` (eval runs as chat JSONL).
    Called once.
    """


@hookspec
def agentenv_add_agents(registry: "Registry") -> None:
    """Add agents (policies used by ``agentenv run`` and ``agentenv eval``) with
    ``registry.add_agent(name, factory, help)``: ``factory(argument, task, mode) -> Agent``, where
    *argument* is what follows ``NAME:`` on the command line (``replay:FILE``), or None. Called once.
    """


@hookspec
def agentenv_add_cli_commands(registry: "Registry") -> None:
    """Add ``agentenv`` subcommands with ``registry.add_command(name, help, configure, run)``:
    ``configure(parser)`` adds arguments, ``run(args) -> int`` is the exit status. Called once.
    """
