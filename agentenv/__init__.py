"""agentenv: coding tasks as Gymnasium environments in fast, isolated sandboxes.

``import agentenv`` registers every task of the installed suites with Gymnasium::

    import gymnasium as gym
    import agentenv

    env = gym.make("agentenv/examples.fizzbuzz-v0")
    obs, info = env.reset()

Everything public is listed in ``__all__`` (sorted; ``tests/test_architecture.py`` guards it);
every other module of the package is private. The kernel is stacked in one direction (paths and
errors, spec, sandbox, extension base classes, plugins, schema and scoring, env, this module);
``docs/architecture.md`` draws it.
"""

import pluggy as _pluggy

__version__ = "0.1.0"

#: marks a function of a plugin as the implementation of a hook (see :mod:`agentenv.hookspecs`)
hookimpl = _pluggy.HookimplMarker("agentenv")

from ._errors import (  # noqa: E402
    ActionError,
    AgentEnvError,
    AgentError,
    AuditError,
    BackendUnavailable,
    EvalError,
    InfrastructureError,
    LeaderboardError,
    PluginError,
    ProblemFileError,
    RuntimeBuildError,
    SandboxError,
    SchedulerError,
    SourceError,
    SynthesisError,
    TaskSpecError,
    ToolError,
    UnknownNameError,
    Violation,
    visible,
)
from ._paths import bundled_dir, cache_dir, matches_any  # noqa: E402
from ._spec import (  # noqa: E402
    AGENTIC,
    DEFAULT_PROTECTED,
    PLACEHOLDER,
    SINGLE_SHOT,
    Limits,
    Mode,
    RewardMode,
    TaskSpec,
)
from ._sources import Sdist, pin_sdist, sdist_files  # noqa: E402
from ._sandbox import (  # noqa: E402
    SANDBOX_UID,
    AgentSandbox,
    Availability,
    ExecResult,
    Isolation,
    RuntimeEnv,
    Sandbox,
    SandboxBackend,
    SandboxRequest,
)
from ._workspace import materialize  # noqa: E402
from ._extension import (  # noqa: E402
    ActionContext,
    ActionOutcome,
    ActionType,
    Agent,
    EpisodeView,
    MetricInfo,
    MetricProvider,
    ReportFormat,
    RewardModel,
    RunContext,
    Runtime,
    ScoredCommand,
    ScoringContext,
    TestReport,
    describe_value,
)
from ._plugins import PluginInfo, PluginManager, Registry, get_plugin_manager, registry  # noqa: E402
from ._schema import load_task, parse_task, task_schema, task_warnings  # noqa: E402
from ._suites import Suite, find_suite, installed_suites, read_suite, task_files  # noqa: E402
from ._sandbox_server import source as sandbox_server_source  # noqa: E402
from ._reward import RewardResult, compute_reward  # noqa: E402
from ._curriculum import (  # noqa: E402
    CALIBRATION_FILE,
    DIFFICULTY_BANDS,
    Curriculum,
    DynamicBatch,
    GroupFilter,
    TaskDifficulty,
    difficulty_band,
    fill_batch,
    filter_groups,
    has_signal,
    read_calibration,
    wilson_interval,
)
from ._trajectory import TRAJECTORY_SCHEMA, TrajectoryWriter, jsonable, read_jsonl  # noqa: E402
from ._chat import resolve_task, tools  # noqa: E402
from ._async import AsyncCodingEnv, BatchRollout, RolloutPool  # noqa: E402
from ._backends import get_backend  # noqa: E402
from ._env import CodeText, CodingEnv, Measurements  # noqa: E402
from ._episode import CAUSES, EpisodeResult, ScriptedAgent, make_agent, run_episode  # noqa: E402
from ._scheduler import (  # noqa: E402
    Attempt,
    AttemptContext,
    Clock,
    Deadlines,
    DurationPredictor,
    EpisodeJob,
    EpisodeOutcome,
    Executor,
    Lane,
    OverProvision,
    RunReport,
    Scheduler,
    SchedulerConfig,
    ThreadExecutor,
)
from ._rollout import EpisodeWork, Rollout, RolloutRequest, rollout_job, task_deadlines  # noqa: E402
from ._registration import register_envs, register_on_import  # noqa: E402

__all__ = [
    "AGENTIC",
    "ActionContext",
    "ActionError",
    "ActionOutcome",
    "ActionType",
    "Agent",
    "AgentEnvError",
    "AgentError",
    "AgentSandbox",
    "AsyncCodingEnv",
    "Attempt",
    "AttemptContext",
    "AuditError",
    "Availability",
    "BackendUnavailable",
    "BatchRollout",
    "CALIBRATION_FILE",
    "CAUSES",
    "Clock",
    "CodeText",
    "CodingEnv",
    "Curriculum",
    "DEFAULT_PROTECTED",
    "DIFFICULTY_BANDS",
    "Deadlines",
    "DurationPredictor",
    "DynamicBatch",
    "EpisodeJob",
    "EpisodeOutcome",
    "EpisodeResult",
    "EpisodeView",
    "EpisodeWork",
    "EvalError",
    "ExecResult",
    "Executor",
    "GroupFilter",
    "InfrastructureError",
    "Isolation",
    "Lane",
    "LeaderboardError",
    "Limits",
    "Measurements",
    "MetricInfo",
    "MetricProvider",
    "Mode",
    "OverProvision",
    "PLACEHOLDER",
    "PluginError",
    "PluginInfo",
    "PluginManager",
    "ProblemFileError",
    "Registry",
    "ReportFormat",
    "RewardMode",
    "RewardModel",
    "RewardResult",
    "Rollout",
    "RolloutPool",
    "RolloutRequest",
    "RunContext",
    "RunReport",
    "Runtime",
    "RuntimeBuildError",
    "RuntimeEnv",
    "SANDBOX_UID",
    "SINGLE_SHOT",
    "Sandbox",
    "SandboxBackend",
    "SandboxError",
    "SandboxRequest",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerError",
    "ScoredCommand",
    "ScoringContext",
    "ScriptedAgent",
    "Sdist",
    "SourceError",
    "Suite",
    "SynthesisError",
    "TRAJECTORY_SCHEMA",
    "TaskDifficulty",
    "TaskSpec",
    "TaskSpecError",
    "TestReport",
    "ThreadExecutor",
    "ToolError",
    "TrajectoryWriter",
    "UnknownNameError",
    "Violation",
    "bundled_dir",
    "cache_dir",
    "compute_reward",
    "describe_value",
    "difficulty_band",
    "fill_batch",
    "filter_groups",
    "find_suite",
    "get_backend",
    "get_plugin_manager",
    "has_signal",
    "hookimpl",
    "installed_suites",
    "jsonable",
    "load_task",
    "make_agent",
    "matches_any",
    "materialize",
    "parse_task",
    "pin_sdist",
    "read_calibration",
    "read_jsonl",
    "read_suite",
    "register_envs",
    "registry",
    "resolve_task",
    "rollout_job",
    "run_episode",
    "sandbox_server_source",
    "sdist_files",
    "task_deadlines",
    "task_files",
    "task_schema",
    "task_warnings",
    "tools",
    "visible",
    "wilson_interval",
]

register_on_import()
del register_on_import
