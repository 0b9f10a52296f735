"""verl reward functions that score a response in an agentenv sandbox.

Point verl at them (``reward.custom_reward_function.path`` = this file, ``name`` = one of):

* ``compute_score(data_source, solution_str, ground_truth, extra_info)`` for the ``naive``
  reward manager (one response at a time);
* ``compute_score_async`` (same arguments) for the async reward loop, which awaits many at once;
* ``compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos)`` for the
  ``batch`` reward manager: the whole batch scored concurrently.

``ground_truth`` (or ``extra_info["task"]``) names the task: an env id, task id or task file, as
:func:`agentenv_verl.data.rows` writes it. The response is scored single-shot, as an assistant
reply (a fenced code block). The result is a dict: ``score`` (the reward), ``success``,
``reward_masked``, ``tests_passed``, ``tests_total``. verl has no per-sample mask: a masked sample
(an infrastructure failure that persisted through ``retries``) scores 0 with ``reward_masked: 1``,
which verl logs; filter or alert on it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Sequence

import agentenv

_POOL: agentenv.RolloutPool | None = None
_LOCK = threading.Lock()


def pool() -> agentenv.RolloutPool:
    """The process's pool (verl calls reward functions in its reward workers, many times)."""
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = agentenv.RolloutPool(retries=1)
        return _POOL


def _task(ground_truth: Any, extra_info: Any) -> str:
    if isinstance(extra_info, dict) and extra_info.get("task"):
        return str(extra_info["task"])
    return str(ground_truth)


def _result(rollout: agentenv.BatchRollout) -> dict[str, Any]:
    return {"score": 0.0 if rollout.reward_masked else rollout.reward, "success": float(rollout.success),
            "reward_masked": float(rollout.reward_masked), "tests_passed": float(rollout.metrics.get("tests_passed", 0)),
            "tests_total": float(rollout.metrics.get("tests_total", 0))}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    return _result(pool().score_sync([_task(ground_truth, extra_info)], [solution_str])[0])


async def compute_score_async(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                              **kwargs: Any) -> dict[str, Any]:
    # verl's reward loop runs its own event loop; the pool's work happens on its own threads
    future = asyncio.wrap_future(_submit([_task(ground_truth, extra_info)], [solution_str]))
    return _result((await future)[0])


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    tasks = [_task(g, e) for g, e in zip(ground_truths, infos)]
    return [_result(r) for r in pool().score_sync(tasks, list(solution_strs))]


def _submit(tasks: list[str], replies: list[str]):
    import concurrent.futures

    future: concurrent.futures.Future = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(pool().score_sync(tasks, replies))
        except BaseException as exc:  # handed to the awaiting coroutine
            future.set_exception(exc)
    threading.Thread(target=run, daemon=True).start()
    return future
