"""A real MCP client session with ``agentenv serve-mcp`` (a subprocess over stdio): the agent acts, is scored."""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters

import agentenv

SOLUTION = os.path.join(os.path.dirname(agentenv.resolve_task("examples.bank_transfer").source), "solution", "bank")


def test_an_mcp_client_acts_in_the_sandbox_and_is_scored(tmp_path):
    trajectory = tmp_path / "mcp.jsonl"
    server = StdioServerParameters(command=sys.executable, args=[
        "-m", "agentenv", "serve-mcp", "examples.bank_transfer", "--max-rounds", "8", "--trajectory", str(trajectory)])

    async def session():
        async with Client(server, read_timeout_seconds=300) as client:
            listed = (await client.list_tools()).tools
            seen = {}
            seen["read"] = await client.call_tool("read_file", {"path": "bank/ledger.py"})
            seen["refused"] = await client.call_tool("read_file", {"path": "bank/ledger.py", "mode": "rb"})
            for name in ("accounts.py", "ledger.py"):
                await client.call_tool("overwrite_file", {"path": f"bank/{name}",
                                                          "content": open(os.path.join(SOLUTION, name)).read()})
            seen["submit"] = await client.call_tool("submit", {})
            seen["late"] = await client.call_tool("list_files", {})
            seen["again"] = await client.call_tool("new_episode", {})
            seen["fresh"] = await client.call_tool("submit", {})  # the unchanged workspace fails its tests
            return listed, seen

    listed, seen = anyio.run(session)
    tools = {t.name: t for t in listed}
    assert set(tools) == set(agentenv.registry().actions) | {"new_episode"}
    assert tools["run_command"].input_schema["required"] == ["command"]
    assert "def transfer" in seen["read"].content[0].text and not seen["read"].is_error
    assert seen["refused"].is_error and "has no field 'mode'" in seen["refused"].content[0].text
    submit = seen["submit"].structured_content
    assert submit["reward"] == 1.0 and submit["success"] and submit["terminated"] and submit["round"] == 5
    assert "[evaluation]" in seen["submit"].content[0].text and submit["integrity"]["ok"]
    assert seen["late"].is_error and "new_episode" in seen["late"].content[0].text
    assert seen["again"].structured_content["episode"] == 2
    assert seen["fresh"].structured_content["reward"] == 0.0 and not seen["fresh"].structured_content["success"]
    records = [json.loads(line) for line in trajectory.read_text().splitlines()]
    assert [r["type"] for r in records].count("reset") == 2 and records[-1]["reward"] == 0.0
