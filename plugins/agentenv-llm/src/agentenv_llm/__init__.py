"""agentenv-llm: LLM post-training on agentenv (TRL adapters, a local OpenAI-compatible model
server, a tiny model for tests). See docs/llm.md."""
