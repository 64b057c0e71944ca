"""Bank («Банк»), the Russian shedding game of beating the bank's top card (rules:
docs/bank.md)."""

from engine.bank.moves import Move, beats, legal_moves, read_move, write_move
from engine.bank.play import apply, new_game
from engine.bank.rules import PRESETS, Rules
from engine.bank.scoring import score
from engine.bank.state import State
from engine.errors import MoveError, RulesError, StateError
from engine.game import seat_view as view

__all__ = [
    "PRESETS", "Move", "MoveError", "Rules", "RulesError", "State", "StateError", "apply",
    "beats", "legal_moves", "new_game", "read_move", "score", "view", "write_move",
]  # fmt: skip
