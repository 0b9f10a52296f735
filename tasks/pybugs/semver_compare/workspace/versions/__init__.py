"""versions package."""
from versions.errors import InvalidVersion
from versions.semver import Version, compare
