"""Plugins that ship with agentenv, registered exactly like third-party ones.

The kernel names them in ``agentenv._plugins.DEFAULT_PLUGINS`` and never imports them otherwise;
each imports only ``agentenv``'s public API (and its siblings here), as a stranger's plugin would.
"""
