"""One live sandbox's actions as MCP tools.

An MCP client (a coding agent harness, an IDE assistant) connects over stdio and sees one tool per
agentenv action type, with the JSON Schema the action declares as its ``input_schema``, and one
more, ``new_episode``, that starts over in a fresh sandbox. Each call is one round of an agentic
episode of the task: its text is what the action printed; ``structured_content`` carries
``reward``, ``terminated``, ``truncated``, ``round`` and, once the task's evaluation ran, ``score``,
``success``, ``reward_breakdown`` and ``integrity``; a refused action comes back with ``is_error``.
The reward is the task's own, exactly as ``CodingEnv`` computes it (the evaluation runs in a second,
pristine sandbox), so an agent is scored the same whether it speaks MCP, Gymnasium or chat.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as types
from mcp import stdio_server
from mcp.server.lowlevel import Server

import agentenv
from agentenv.wrappers import SYSTEM_AGENTIC, agentic_prompt

NEW_EPISODE = "new_episode"


class SandboxServer:
    """The MCP server around one :class:`agentenv.AsyncCodingEnv` (agentic mode)."""

    def __init__(self, task: agentenv.TaskSpec, **env_kwargs: Any):
        self.task = task
        self.env = agentenv.AsyncCodingEnv(task, **{**env_kwargs, "mode": "agentic"})
        self.max_rounds = env_kwargs.get("max_rounds") or task.max_rounds
        self.episodes = 0
        self.done = True
        self.last: dict[str, Any] = {}
        self.tools = agentenv.tools(task, format="anthropic")
        names = {t["name"] for t in self.tools}
        if NEW_EPISODE not in names:  # a plugin's action of that name wins
            self.tools.append({"name": NEW_EPISODE, "description": "Start a new episode of the task in a fresh "
                               "sandbox (the workspace as the task gives it).",
                               "input_schema": {"type": "object", "properties": {}, "additionalProperties": False}})
        self.actions = {agentenv.wrappers.tool_name(a): a for a in agentenv.registry().actions}
        self.server = Server("agentenv", version=agentenv.__version__, instructions=self.instructions(),
                             on_list_tools=self._list_tools, on_call_tool=self._call_tool)

    def instructions(self) -> str:
        return f"{SYSTEM_AGENTIC}\n\n{agentic_prompt(self.task, self.max_rounds)}"

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=t["name"], description=t["description"],
                                                       input_schema=t["input_schema"]) for t in self.tools])

    async def _start(self) -> str:
        _, info = await self.env.reset()
        self.episodes += 1
        self.done = bool(info.get("reward_masked"))
        self.last = {"episode": self.episodes, "round": 0, "reward_masked": self.done,
                     "infra_error": info.get("infra_error")}
        if self.done:
            return f"[the sandbox could not be started: {info.get('infra_error')}]"
        return f"Episode {self.episodes} started: a fresh workspace at {self.task.root}."

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, dict(params.arguments or {})
        if name == NEW_EPISODE and name not in self.actions:
            text = await self._start()
            return _result(text, self.last, error=self.last["reward_masked"])
        if self.episodes == 0:
            await self._start()
        if self.done:
            return _result(f"[the episode is over; call {NEW_EPISODE} to start another]", self.last, error=True)
        action = {**arguments, "action": self.actions.get(name, name)}
        obs, reward, terminated, truncated, info = await self.env.step(action)
        self.done = terminated or truncated
        self.last = _summary(self.episodes, reward, terminated, truncated, info)
        return _result(obs["output"], self.last, error=bool(info.get("action_error")))

    async def serve_stdio(self) -> None:
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())
        await self.env.close()


def _summary(episode: int, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]) -> dict[str, Any]:
    out = {"episode": episode, "round": info.get("round"), "reward": reward, "terminated": terminated,
           "truncated": truncated, "reward_masked": bool(info.get("reward_masked")), "infra_error": info.get("infra_error")}
    if info.get("reward_breakdown"):
        out.update(score=info.get("score"), success=info.get("success"), reward_breakdown=info["reward_breakdown"],
                   integrity=info.get("integrity"))
    return json.loads(json.dumps(out, default=str))


def _result(text: str, structured: dict[str, Any], error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, is_error=error)


def main(task: str, **env_kwargs: Any) -> int:
    import anyio

    server = SandboxServer(agentenv.resolve_task(task), **env_kwargs)
    print(f"[serve-mcp] {server.task.task_id}: {len(server.tools)} tools over stdio", file=sys.stderr)
    anyio.run(server.serve_stdio)
    return 0
