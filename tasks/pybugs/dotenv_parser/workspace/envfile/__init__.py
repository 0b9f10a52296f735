"""envfile package."""
from envfile.parser import parse_env
from envfile.errors import EnvSyntaxError
