"""agentenv-verl: verl reward and agent-loop adapters for agentenv tasks (see docs/llm.md)."""
