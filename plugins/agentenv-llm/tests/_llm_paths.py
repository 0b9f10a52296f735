"""Paths the agentenv-llm tests share (a plain module: conftest.py names clash across test folders)."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
SCRATCH_TASK = os.path.join(HERE, "tasks", "scratch", "task.json")
