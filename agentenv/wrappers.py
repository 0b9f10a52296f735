"""Wrappers that change how an agent talks to an environment, and the chat format they speak.

:class:`ChatEnv` turns a :class:`agentenv.CodingEnv` into a chat environment: observations are chat
messages, actions are assistant messages with tool calls (OpenAI or Anthropic shape) or text with
a fenced code block. The helpers read and write that format: :func:`parse_reply` (any accepted
assistant message, never raising), :func:`extract_code` and :func:`fence` (code blocks),
:func:`chat_prompt` and :func:`opening_messages` (the opening messages of an episode), :func:`tool_name` (an action's tool
name), :func:`to_anthropic` (OpenAI-shape messages for Anthropic's API). See ``docs/llm.md``.
"""

from ._chat import (
    SYSTEM_AGENTIC,
    SYSTEM_SINGLE_SHOT,
    AssistantReply,
    ChatEnv,
    ToolCall,
    agentic_prompt,
    chat_prompt,
    extract_code,
    fence,
    opening_messages,
    parse_reply,
    task_reference,
    to_anthropic,
    tool_name,
)

__all__ = [
    "SYSTEM_AGENTIC",
    "SYSTEM_SINGLE_SHOT",
    "AssistantReply",
    "ChatEnv",
    "ToolCall",
    "agentic_prompt",
    "chat_prompt",
    "extract_code",
    "fence",
    "opening_messages",
    "parse_reply",
    "task_reference",
    "to_anthropic",
    "tool_name",
]
