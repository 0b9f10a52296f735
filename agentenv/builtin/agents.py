"""Built-in agents: ``reference`` (the task's reference solution) and ``noop`` (changes nothing)."""

from __future__ import annotations

import agentenv
from agentenv import SINGLE_SHOT, Agent


class ReferenceAgent(Agent):
    """Plays the task's reference solution: the reference file single-shot; in agentic mode it
    writes every reference file, then submits."""

    name = "reference"

    def reset(self, task, mode, seed=None):
        self.task, self.mode = task, mode
        self.pending = [{"action": "overwrite_file", "path": path, "content": content}
                        for path, content in sorted(task.reference_files().items())] + [{"action": "submit"}]

    def act(self, observation, info):
        if self.mode == SINGLE_SHOT:
            code = self.task.reference_code()
            if code is None:
                raise ValueError(f"task {self.task.task_id} has no reference for its single-shot file "
                                 f"{self.task.single_shot_path}")
            return code
        return self.pending.pop(0) if self.pending else {"action": "submit"}


class NoopAgent(Agent):
    """Submits the workspace unchanged: single-shot, the file's initial content."""

    name = "noop"

    def reset(self, task, mode, seed=None):
        self.task, self.mode = task, mode

    def act(self, observation, info):
        if self.mode == SINGLE_SHOT:
            return self.task.workspace.read().get(self.task.single_shot_path, b"").decode()
        return {"action": "submit"}


@agentenv.hookimpl
def agentenv_add_agents(registry) -> None:
    registry.add_agent("reference", lambda arg, task, mode: ReferenceAgent(), "the task's reference solution")
    registry.add_agent("noop", lambda arg, task, mode: NoopAgent(), "submit the workspace unchanged")
