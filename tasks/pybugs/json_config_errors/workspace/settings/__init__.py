"""Configuration loading."""
from settings.errors import ConfigError
from settings.loader import load_config, parse_config

__all__ = ["ConfigError", "load_config", "parse_config"]
