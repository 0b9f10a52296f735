"""Plugins that ship with agentenv, registered exactly like third-party ones."""

DEFAULT_PLUGINS = (
    "agentenv.builtin.runtimes",
    "agentenv.builtin.namespace_plugin",
    "agentenv.builtin.actions",
    "agentenv.builtin.metrics",
    "agentenv.builtin.reward_models",
    "agentenv.builtin.suites",
    "agentenv.builtin.agents",
    "agentenv.builtin.cli",
    "agentenv.builtin.suites_cli",
    "agentenv.builtin.agents_extra",
    "agentenv.builtin.evaluation",
    "agentenv.builtin.audit_cli",
    "agentenv.builtin.llm",
)
