"""{{cookiecutter.description}}.

agentenv loads the hooks in ``plugin.py`` through the entry point in pyproject.toml; importing this
package is not needed to use them.
"""

__version__ = "0.1.0"
