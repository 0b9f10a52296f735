"""Every bundled backend keeps the sandbox contract of ``agentenv.testing.check_backend`` (the Docker
backend runs it in ``plugins/agentenv-docker/tests``); a stranger's backend runs the same check."""

import pytest

import agentenv
from agentenv.builtin.namespace import NamespaceBackend
from agentenv.testing import MemoryBackend, check_backend


def test_the_namespace_backend_keeps_the_contract():
    backend = NamespaceBackend(pool_size=1)
    try:
        checked = check_backend(backend)
    finally:
        backend.close()
    assert checked == ["exec", "files", "isolation_between_sandboxes", "lifecycle", "no_host_paths", "pipes",
                       "timeout", "usage", "workspace"]


def test_the_namespace_backend_keeps_it_with_a_real_python_runtime():
    task = agentenv.load_task(agentenv.find_suite("examples").task_files[0])
    runtime = agentenv.registry().runtime_for(task.environment.runtime).prepare(task.environment, agentenv.cache_dir())
    assert "exec" in check_backend(agentenv.get_backend("namespace"), runtime)


@pytest.mark.unit
def test_a_backend_that_breaks_a_promise_is_named_with_the_clause():
    class Forgetful(MemoryBackend):
        """Loses every write: read_file returns the pristine content."""

        def open(self, request):
            box = super().open(request)
            box.write_file = lambda path, data, mode=0o644: None
            return box

    with pytest.raises(AssertionError, match=r"Forgetful breaks the sandbox contract, clause '(files|workspace)'"):
        check_backend(Forgetful(), runs_programs=False)
