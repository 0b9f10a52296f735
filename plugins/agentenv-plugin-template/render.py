"""Render this template without cookiecutter (standard library only).

    python plugins/agentenv-plugin-template/render.py DEST [project_name=agentenv-foo module=agentenv_foo ...]

does what ``cookiecutter plugins/agentenv-plugin-template`` does with the same answers: copies the
``{{cookiecutter.project_name}}`` folder to DEST, replacing every ``{{cookiecutter.KEY}}`` in paths
and file contents with the value from ``cookiecutter.json`` or the command line. It prints the new
project's folder.
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_VARIABLE = re.compile(r"\{\{\s*cookiecutter\.(\w+)\s*\}\}")


def render(dest: str, **answers: str) -> str:
    """Render the template into *dest* (created); returns the project folder inside it."""
    with open(os.path.join(HERE, "cookiecutter.json")) as f:
        defaults = json.load(f)
    unknown = sorted(set(answers) - set(defaults))
    if unknown:
        raise SystemExit(f"unknown template variable(s) {', '.join(unknown)}; known: {', '.join(sorted(defaults))}")
    values = {**defaults, **answers}

    def fill(text: str) -> str:
        return _VARIABLE.sub(lambda m: str(values[m.group(1)]), text)

    source = os.path.join(HERE, "{{cookiecutter.project_name}}")
    project = os.path.join(dest, fill(os.path.basename(source)))
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        target = os.path.join(project, fill(os.path.relpath(root, source)))
        os.makedirs(target, exist_ok=True)
        for name in files:
            with open(os.path.join(root, name), encoding="utf-8") as f:
                text = f.read()
            with open(os.path.join(target, fill(name)), "w", encoding="utf-8") as f:
                f.write(fill(text))
    return os.path.normpath(project)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        raise SystemExit(__doc__)
    pairs = dict(arg.split("=", 1) for arg in sys.argv[2:])
    print(render(sys.argv[1], **pairs))
