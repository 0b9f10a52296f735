"""agentenv: coding tasks as Gymnasium environments in fast, isolated sandboxes.

``import agentenv`` registers every task of the installed suites with Gymnasium::

    import gymnasium as gym
    import agentenv

    env = gym.make("agentenv/examples.fizzbuzz-v0")
    obs, info = env.reset()
"""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("agentenv")

from ._errors import (  # noqa: E402
    ActionError,
    AgentEnvError,
    BackendUnavailable,
    InfrastructureError,
    PluginError,
    RuntimeBuildError,
    SandboxError,
    TaskSpecError,
    UnknownNameError,
    Violation,
)
from ._extension import (  # noqa: E402
    ActionContext,
    ActionOutcome,
    ActionType,
    Agent,
    EpisodeView,
    MetricInfo,
    MetricProvider,
    RewardModel,
    RunContext,
    Runtime,
)
from ._sandbox import (  # noqa: E402
    AgentSandbox,
    Availability,
    ExecResult,
    Isolation,
    Limits,
    RuntimeEnv,
    Sandbox,
    SandboxBackend,
    SandboxRequest,
)
from ._sandbox_server import source as sandbox_server_source  # noqa: E402
from ._spec import TaskSpec, load_task, parse_task, task_schema  # noqa: E402
from ._reward import RewardResult, compute_reward  # noqa: E402
from ._env import CodeText, CodingEnv, Measurements  # noqa: E402
from ._backends import get_backend  # noqa: E402
from ._plugins import get_plugin_manager, registry  # noqa: E402
from ._runner import EpisodeResult, make_agent, run_episode  # noqa: E402
from ._suites import Suite, find_suite, installed_suites  # noqa: E402
from ._registration import register_envs  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ActionContext",
    "ActionError",
    "ActionOutcome",
    "ActionType",
    "Agent",
    "AgentEnvError",
    "AgentSandbox",
    "Availability",
    "BackendUnavailable",
    "CodeText",
    "CodingEnv",
    "EpisodeResult",
    "EpisodeView",
    "ExecResult",
    "InfrastructureError",
    "Isolation",
    "Limits",
    "Measurements",
    "MetricInfo",
    "MetricProvider",
    "PluginError",
    "RewardModel",
    "RewardResult",
    "RunContext",
    "Runtime",
    "RuntimeBuildError",
    "RuntimeEnv",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxRequest",
    "Suite",
    "TaskSpec",
    "TaskSpecError",
    "UnknownNameError",
    "Violation",
    "compute_reward",
    "find_suite",
    "get_backend",
    "get_plugin_manager",
    "hookimpl",
    "installed_suites",
    "load_task",
    "make_agent",
    "parse_task",
    "register_envs",
    "registry",
    "run_episode",
    "sandbox_server_source",
    "task_schema",
]

register_envs()
