"""buildgraph package."""
from buildgraph.errors import CycleError
from buildgraph.toposort import build_order
from buildgraph.makefile import parse_rules
