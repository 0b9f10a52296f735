"""The ``readability`` reward model: a trained checkpoint scores the Python the agent wrote.

A rule::

    {"reward_model": "readability", "weight": 0.1,
     "options": {"checkpoint": "models/readability.pt", "aggregate": "min", "files": "changed",
                 "gate": {"metric": "test_pass_rate", "min": 1.0}}}

Every option may be left out:

``checkpoint``  a file written by ``agentenv rm train`` (relative to the task file's folder); the
                bundled checkpoint when left out. One trained on another code representation is
                refused with the command that fixes it.
``aggregate``   ``min`` (default: the worst unit of code counts, so tidy padding lifts nothing) or
                ``mean`` (units weighed by their code tokens).
``files``       ``changed`` (default: the Python files the agent added or changed; nothing changed
                scores 0) or ``all`` (every Python file of the final workspace).
``gate``        a condition on the scored runs' metrics, like a rule's gate (default
                ``{"metric": "test_pass_rate", "min": 1.0}``): unless every run that reports the
                metric meets it, the score is 0, so readability never pays for code that fails its
                tests (the composite's own gate does not apply to reward-model rules); ``null``
                turns it off.

It runs on the host, after the evaluation, on the final files (``EpisodeView.files``: protected
files are not there). The files are only read: tokenized, never imported or executed.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Mapping

import agentenv

BUNDLED_CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoints", "readability.pt")
DEFAULT_GATE = {"metric": "test_pass_rate", "min": 1.0}
OPTIONS = ("checkpoint", "aggregate", "files", "gate")


class ReadabilityOptionsError(agentenv.AgentEnvError):
    """A readability rule's options are wrong (an unknown option, a bad value)."""


_scorers: dict[tuple[str, int, int], Any] = {}
_pristine: dict[tuple[str, str, int], dict[str, bytes]] = {}
_lock = threading.Lock()


def scorer_for(path: str):
    """The loaded checkpoint at *path* (cached while the file is unchanged)."""
    from .scorer import Scorer

    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        key = (real, -1, -1)
    else:
        key = (real, stat.st_mtime_ns, stat.st_size)
    with _lock:
        if key not in _scorers:
            _scorers[key] = Scorer(real)
        return _scorers[key]


def check_options(options: Mapping[str, Any], where: str = "options") -> dict[str, Any]:
    """The options with their defaults, or :class:`ReadabilityOptionsError` naming the fix."""
    import difflib

    unknown = [k for k in options if k not in OPTIONS]
    if unknown:
        hint = difflib.get_close_matches(unknown[0], OPTIONS, 1)
        raise ReadabilityOptionsError(f"{where}: the readability reward model has no option {unknown[0]!r}"
                                      + (f"; did you mean {hint[0]!r}?" if hint else "")
                                      + f" (its options: {', '.join(OPTIONS)})")
    out = {"checkpoint": options.get("checkpoint"), "aggregate": options.get("aggregate", "min"),
           "files": options.get("files", "changed"), "gate": options.get("gate", DEFAULT_GATE)}
    if out["aggregate"] not in ("min", "mean"):
        raise ReadabilityOptionsError(f"{where}/aggregate: 'min' or 'mean', not {out['aggregate']!r}")
    if out["files"] not in ("changed", "all"):
        raise ReadabilityOptionsError(f"{where}/files: 'changed' or 'all', not {out['files']!r}")
    gate = out["gate"]
    if gate is not None and not (isinstance(gate, Mapping) and isinstance(gate.get("metric"), str)
                                 and set(gate) <= {"metric", "min", "max"}
                                 and all(isinstance(gate.get(k, 0), (int, float)) for k in ("min", "max"))):
        raise ReadabilityOptionsError(f"{where}/gate: an object like {{\"metric\": \"test_pass_rate\", \"min\": 1.0}} "
                                      f"or null, not {gate!r}")
    if out["checkpoint"] is not None and not isinstance(out["checkpoint"], str):
        raise ReadabilityOptionsError(f"{where}/checkpoint: a path, not {out['checkpoint']!r}")
    return out


def gate_passes(gate: Mapping[str, Any] | None, runs: Any) -> bool:
    if gate is None:
        return True
    values = [m.get(gate["metric"]) for m in runs]
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)]
    if not values:
        return False
    return all((gate.get("min") is None or v >= gate["min"]) and (gate.get("max") is None or v <= gate["max"])
               for v in values)


def checkpoint_path(option: str | None, task: Any) -> str:
    if option is None:
        return BUNDLED_CHECKPOINT
    if os.path.isabs(option):
        return option
    source = getattr(task, "source", "<memory>")
    base = os.path.dirname(os.path.abspath(source)) if source and source != "<memory>" else os.getcwd()
    return os.path.join(base, option)


def _pristine_files(task: Any) -> dict[str, bytes]:
    key = (str(getattr(task, "source", "")), str(getattr(task, "task_id", "")), id(task))
    with _lock:
        if key not in _pristine:
            if len(_pristine) > 256:
                _pristine.clear()
            _pristine[key] = dict(task.workspace.read())
        return _pristine[key]


def score_episode(episode: agentenv.EpisodeView, options: Mapping[str, Any]) -> float:
    """The ``readability`` reward model's score (see the module docstring)."""
    opts = check_options(options, f"{getattr(episode.task, 'source', '?')}: readability options")
    if not gate_passes(opts["gate"], episode.metrics):
        return 0.0
    files = {p: d for p, d in episode.files.items() if p.endswith(".py")}
    if opts["files"] == "changed":
        pristine = _pristine_files(episode.task)
        files = {p: d for p, d in files.items() if pristine.get(p) != d}
    if not files:
        return 0.0
    scorer = scorer_for(checkpoint_path(opts["checkpoint"], episode.task))  # CheckpointError says the fix
    try:
        return scorer.score_files(files, opts["aggregate"]).total
    except Exception as exc:  # the scorer's own failure is the machinery's, never the agent's
        raise agentenv.InfrastructureError(f"the readability model failed: {type(exc).__name__}: {exc}") from exc


def max_score(runs: Any, options: Mapping[str, Any]) -> float:
    """The most the model can give a solution whose scored runs are *runs*: 0 when they fail its gate."""
    return 1.0 if gate_passes(check_options(options)["gate"], runs) else 0.0
