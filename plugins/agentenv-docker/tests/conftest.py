"""Docker tests run against a real engine. Without one they skip with the reason printed; in CI
(``CI=true``) a missing engine or base image fails the run instead, so CI never goes green on
skipped Docker tests. After the session no container of this process may be left."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("AGENTENV_DOCKER_POOL", "1")  # small pools: the machines have 2 cores

RUNTIME = "python3.11"


def _engine_problem() -> str | None:
    try:
        import docker  # noqa: F401

        from agentenv_docker import images
    except ImportError as exc:
        return f"the docker SDK is not installed ({exc}); pip install -e plugins/agentenv-docker"
    try:
        client = images.connect(timeout=10)
    except Exception as exc:
        return str(exc)
    try:
        images.base_image(client, RUNTIME)
    except Exception as exc:
        return str(exc)
    finally:
        client.close()
    return None


PROBLEM = _engine_problem()


def pytest_report_header(config):
    return f"agentenv-docker: {'engine ready' if PROBLEM is None else 'NO ENGINE: ' + PROBLEM}"


@pytest.fixture(scope="session")
def engine():
    """The Docker client; skips (locally) or fails (CI=true) when the engine cannot be used."""
    if PROBLEM is not None:
        message = f"Docker engine not usable: {PROBLEM}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: .ci/run must install and start dockerd and bootstrap the base image)")
        print(message)
        pytest.skip(message)
    from agentenv_docker import images

    client = images.connect()
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def no_container_left():
    yield
    if PROBLEM is not None:
        return
    import agentenv
    from agentenv_docker import images

    agentenv.get_backend("docker").close()  # the shared instance gym.make(backend="docker") used
    client = images.connect()
    left = client.containers.list(all=True, filters={"label": f"{images.OWNER_LABEL}={os.getpid()}"})
    names = [c.name for c in left]
    for c in left:
        c.remove(force=True)
    client.close()
    assert names == [], f"containers left after the test session: {names}"


@pytest.fixture(scope="module")
def backend(engine):
    from agentenv_docker import DockerBackend

    b = DockerBackend(pool_size=1)
    yield b
    b.close()
