"""The parquet rows verl's ``RLHFDataset`` reads, one per task (and sample)."""

from __future__ import annotations

from typing import Any, Sequence

import agentenv
from agentenv.wrappers import opening_messages, task_reference

DATA_SOURCE = "agentenv"


def rows(tasks: Sequence[Any], *, mode: str | None = None, repeat: int = 1) -> list[dict[str, Any]]:
    """``data_source``, ``prompt`` (chat messages), ``reward_model.ground_truth`` (the task: what
    ``compute_score`` scores against), ``extra_info`` and, agentic, ``agent_name: agentenv``.
    *mode*: default single-shot where the task has a ``<model_generated_code>`` step, else agentic."""
    out = []
    for ref in tasks:
        task = agentenv.resolve_task(ref)
        mode_of = mode or ("single_shot" if task.supports_single_shot else "agentic")
        prompt = opening_messages(task, mode_of)
        where = task_reference(task)
        row = {"data_source": DATA_SOURCE, "prompt": prompt, "ability": "coding",
               "reward_model": {"style": "rule", "ground_truth": where},
               "extra_info": {"task": where, "mode": mode_of}}
        if mode_of == "agentic":
            row["agent_name"] = "agentenv"
        out.append(row)
    return [{**row, "extra_info": {**row["extra_info"], "index": i}} for i, row in enumerate(out * repeat)]


def write_parquet(tasks: Sequence[Any], path: str, **kwargs: Any) -> str:
    import pandas as pd

    pd.DataFrame(rows(tasks, **kwargs)).to_parquet(path)
    return path
