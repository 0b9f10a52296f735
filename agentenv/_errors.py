"""The exception tree of agentenv.

Every error agentenv raises on purpose derives from :class:`AgentEnvError`::

    AgentEnvError
    ├── TaskSpecError          a task document is invalid (every violation, with file and JSON pointer)
    ├── PluginError            a plugin failed to import or registered something inconsistent
    ├── UnknownNameError       a runtime / action / metric / backend / suite name nobody provides
    ├── ActionError            an action the agent sent cannot be carried out (bad JSON, path outside
    │                          the workspace, ...); the environment answers it in the observation
    ├── AgentError             an agent is misconfigured (bad spec, unreadable replay file, ...)
    ├── SourceError            a pinned source distribution cannot be fetched, verified or unpacked
    ├── SchedulerError         a scheduler cannot be built or run as asked (bad lanes, deadlines, keys)
    ├── ToolError              a tool built on the environments cannot start or go on (the message
    │   │                      names the file or argument and the fix)
    │   ├── EvalError          agentenv eval: bad arguments, an output folder from another run
    │   ├── LeaderboardError   agentenv leaderboard: results that cannot be read or ranked together
    │   ├── AuditError         agentenv audit: a path that is no task, suite or folder of tasks
    │   ├── SynthesisError     agentenv synthesize: a package that cannot be used for synthesis
    │   └── ProblemFileError   agentenv import: a problem file that cannot be read at all
    └── InfrastructureError    the machinery failed, not the model: such results are flagged, never scored
        ├── SandboxError       a sandbox could not be created, died, or refused an operation
        │   └── BackendUnavailable   a backend cannot run on this host (the message says what to do)
        └── RuntimeBuildError  a runtime or its dependency environment could not be prepared

Lower-layer exceptions (OSError, subprocess errors, docker errors) are mapped onto these and
chained with ``raise ... from exc`` so the original cause stays visible.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence


# What a terminal would act on instead of showing: C0 controls but \n and \t (ESC starts the
# CSI/OSC sequences that recolour, conceal, move the cursor, retitle the window or write the
# clipboard; \r and \b rewrite a line), DEL, the C1 controls (\x9b is a one-byte CSI), the bidi
# overrides and isolates (text shown in another order than it is), and lone surrogates (which
# print cannot encode).
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: object) -> str:
    r"""*text* made safe to print to a terminal or a log: every control character but newline and
    tab is shown as Python's repr shows it (``\x1b``, ``\r``, ``\u202e``) instead of acting.

    Whatever a command line prints that an agent, the code it ran, or a task file chose (step
    actions and outputs, error messages, task ids, file names, agent names) goes through here; text
    the tool writes itself does not. Plugin tools that print such text should use it too."""
    return _UNSAFE.sub(lambda m: repr(m.group())[1:-1], str(text))


class AgentEnvError(Exception):
    """Root of every error agentenv raises on purpose."""


class PluginError(AgentEnvError):
    """A plugin could not be loaded or registered something inconsistent."""


#: set: only the built-in plugins load (read by the plugin manager; named here for error messages)
AUTOLOAD_ENV = "AGENTENV_DISABLE_PLUGIN_AUTOLOAD"
#: names plugins (or distributions) not to load, comma-separated
DISABLE_ENV = "AGENTENV_DISABLE_PLUGINS"
#: an unknown name's message lists the known ones only up to this many (then says where to look)
MAX_LISTED = 20


def plugins_off_hint() -> str:
    """Why a name an installed plugin provides may be unknown: plugins switched off in this
    process's environment ('' when none are)."""
    parts = []
    if os.environ.get(AUTOLOAD_ENV):
        parts.append(f"plugin autoload is disabled ({AUTOLOAD_ENV} is set): only the built-in plugins are "
                     "loaded, so a name an installed plugin provides is unknown; unset it to load them")
    disabled = os.environ.get(DISABLE_ENV, "").strip()
    if disabled:
        parts.append(f"plugins disabled by {DISABLE_ENV}: {disabled}")
    return "; ".join(parts)


class UnknownNameError(AgentEnvError, KeyError):
    """A name (runtime, action, metric, backend, suite, agent, task) that no installed plugin provides.

    *listing* says where to see every known name when there are too many to list (``agentenv list``)."""

    def __init__(self, kind: str, name: str, known: Iterable[str], listing: str = ""):
        self.kind, self.name, self.known, self.listing = kind, name, sorted(known), listing
        super().__init__(self._message())

    def _message(self) -> str:
        msg = f"unknown {self.kind} {self.name!r}"
        hint = did_you_mean(self.name, self.known)
        if hint:
            msg += f"; did you mean {hint}?"
        if len(self.known) > MAX_LISTED and self.listing:
            msg += f" ({len(self.known)} known; {self.listing})"
        elif self.known:
            msg += f" (known: {', '.join(self.known)})"
        off = plugins_off_hint()
        if off:
            msg += f"; {off}"
        return msg

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return self._message()


class ActionError(AgentEnvError):
    """An agent's action that cannot be carried out; reported to the agent, not raised to the caller."""


class AgentError(AgentEnvError):
    """An agent was misconfigured (bad spec, unreadable replay file, a program that will not start)."""


class SourceError(AgentEnvError):
    """A pinned source distribution could not be fetched, verified or unpacked."""


class SchedulerError(AgentEnvError):
    """A scheduler cannot be built or run as asked (bad lanes, deadlines, duplicate job keys...)."""


class ToolError(AgentEnvError):
    """A tool built on the environments (eval, audit, authoring) cannot start or go on."""


class EvalError(ToolError):
    """An evaluation cannot start or continue (bad arguments, an output folder from another run)."""


class LeaderboardError(ToolError):
    """Results that cannot be read or ranked together (the message says which file and why)."""


class AuditError(ToolError):
    """The audit cannot start: a path that is neither a task, a directory of tasks nor a suite,
    or an output directory that is in the way."""


class SynthesisError(ToolError):
    """The package cannot be used for synthesis (no tests found, failing baseline, bad arguments)."""


class ProblemFileError(ToolError):
    """A problem file could not be read at all (a bad record is reported, not raised)."""


class InfrastructureError(AgentEnvError):
    """The machinery failed (not the model). Results produced under it are flagged and masked."""


class SandboxError(InfrastructureError):
    """A sandbox could not be created, died, or refused an operation."""

    #: why the sandbox died of what the agent's code did to it, where the backend can tell (its
    #: memory cgroup's OOM killer took the sandbox's own server): then the agent's failure, scored 0
    #: and never masked, or a policy could turn any failing episode into a masked one
    agents_doing: str | None = None

    @classmethod
    def out_of_memory(cls, message: str, memory_mb: int) -> "SandboxError":
        """A sandbox whose own server the OOM killer took: what the agent's commands held did it."""
        error = cls(message)
        error.agents_doing = (f"the sandbox ran out of memory (the memory limit, {memory_mb} MB, counts its files "
                              f"in /tmp, /dev/shm and the workspace too) and its server was killed")
        return error

    @classmethod
    def dead(cls, message: str, agents_doing: str | None) -> "SandboxError":
        """A call to a sandbox that died before: it carries what it died of (a fork whose snapshot
        ran it out of memory left the episode's next step to find it dead, and masked it)."""
        error = cls(message)
        error.agents_doing = agents_doing
        return error


class BackendUnavailable(SandboxError):
    """A sandbox backend cannot run on this host; the message says why and what to do."""


class RuntimeBuildError(InfrastructureError):
    """A runtime could not be resolved or its dependency environment could not be built."""


@dataclass(frozen=True)
class Violation:
    """One problem found in a task document."""

    pointer: str  # JSON pointer into the document, "" for the root
    message: str
    expected: str = ""
    found: Any = None

    def __str__(self) -> str:
        where = self.pointer or "/"
        text = f"{where}: {self.message}"
        if self.expected:
            text += f" (expected {self.expected}"
            text += f", found {_short(self.found)})" if self.found is not None else ")"
        return text


class TaskSpecError(AgentEnvError, ValueError):
    """A task document (or a suite file, *document*) is invalid; carries every violation, each with
    its JSON pointer."""

    def __init__(self, path: str, violations: Sequence[Violation], document: str = "task document"):
        self.path = path
        self.violations = tuple(violations)
        lines = [f"{path}: {len(self.violations)} problem(s) in the {document}"]
        lines += [f"  - {v}" for v in self.violations]
        super().__init__("\n".join(lines))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """A quoted, comma-separated list of close matches for *name*, or ''."""
    close = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.6)
    return ", ".join(repr(c) for c in close)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
