"""Built-in defaults."""
DEFAULTS = {
    "host": "127.0.0.1",
    "port": 8080,
    "debug": False,
    "workers": 2,
}
