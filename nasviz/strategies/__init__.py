"""Search strategies with an ask/tell interface."""

from nasviz.strategies.base import Strategy
from nasviz.strategies.random_search import RandomSearch

__all__ = ["RandomSearch", "Strategy"]
