"""Basra, the Middle-Eastern fishing game (rules: docs/basra.md)."""

from engine.basra.moves import Move, legal_moves, read_move, write_move
from engine.basra.play import apply, new_game
from engine.basra.rules import PRESETS, Rules
from engine.basra.scoring import score
from engine.basra.state import State
from engine.errors import MoveError, RulesError, StateError
from engine.game import seat_view as view

__all__ = [
    "PRESETS", "Move", "MoveError", "Rules", "RulesError", "State", "StateError", "apply",
    "legal_moves", "new_game", "read_move", "score", "view", "write_move",
]  # fmt: skip
