"""Basra, the Middle-Eastern fishing game (rules: docs/basra.md)."""

from engine.basra.moves import Move
from engine.basra.play import MoveError, apply, legal_moves, new_game, read_move, score, view
from engine.basra.rules import PRESETS, Rules, RulesError
from engine.basra.state import State, StateError

__all__ = [
    "PRESETS", "Move", "MoveError", "Rules", "RulesError", "State", "StateError", "apply",
    "legal_moves", "new_game", "read_move", "score", "view",
]  # fmt: skip
