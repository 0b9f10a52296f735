"""Paths the core tests share (a plain module: conftest.py names clash across test folders)."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "tasks", "examples")
REFERENCE_DOC = os.path.join(EXAMPLES, "reference", "complex_code_refactor_01.json")


def example(name: str) -> str:
    return os.path.join(EXAMPLES, name, "task.json")


def unprivileged_python() -> tuple[str, str]:
    """The host's own Python and this venv's site-packages, for tests that run the project as uid 4242
    (the venv's interpreter may live under /root); skips, saying why, where that user cannot run it."""
    import subprocess
    import sys

    import pytest

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter = f"/usr/bin/python{version}"
    site_packages = os.path.join(sys.prefix, "lib", f"python{version}", "site-packages")
    if os.geteuid() != 0:
        pytest.skip("needs root, to run as a user of its own (the suite as a user runs rootless anyway)")
    if not os.path.exists(interpreter) or not os.path.isdir(site_packages):
        pytest.skip(f"needs {interpreter} and {site_packages}")
    for needed in (os.path.join(site_packages, "pytest", "__init__.py"), os.path.join(REPO, "agentenv", "__init__.py")):
        probe = subprocess.run(["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "test", "-r", needed])
        if probe.returncode != 0:
            pytest.skip(f"uid 4242 cannot read {needed}: a folder above it is closed to other users (a "
                        "`mktemp -d` checkout is 0700); clone into a folder others may enter to run this test")
    return interpreter, site_packages
