"""agentenv-rm: a readability reward model trained on code people wrote.

``agentenv rm dataset`` makes preference pairs (a function as its author wrote it, preferred to a
behaviour-identical degraded version), ``agentenv rm train`` fits a small network to them,
``agentenv rm eval`` compares it with the signals a user could pick instead, and the
``readability`` reward model scores an episode's files with a checkpoint (one ships with the plugin).
"""

__version__ = "0.1.0"
