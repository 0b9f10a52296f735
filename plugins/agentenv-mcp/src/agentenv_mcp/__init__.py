"""agentenv-mcp: an agentenv sandbox as an MCP server (``agentenv serve-mcp TASK``)."""
