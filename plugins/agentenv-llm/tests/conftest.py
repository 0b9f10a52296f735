import pytest


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    """The machines are shared: torch's thread pool would fight the sandboxes for the cores."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_model():
    """The tiny model fitted to run the tests and submit (built once per machine, ~30 s, then cached)."""
    from agentenv_llm.tiny import cached_tiny

    return cached_tiny("tool-use")


@pytest.fixture(scope="session")
def server(tiny_model):
    from agentenv_llm.server import ModelServer

    with ModelServer(tiny_model, name="tiny") as running:
        yield running
