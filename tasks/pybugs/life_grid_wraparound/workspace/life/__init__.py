"""life package."""
from life.board import Board
from life.patterns import parse_pattern, render
