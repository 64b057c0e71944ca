"""The random and greedy levels."""

import random
from typing import Any

from engine.game import Game


def random_player(game: Game, state: Any, seed: str) -> tuple[Any, list[tuple[Any, float]]]:
    """Uniform over the legal moves."""
    moves = game.legal_moves(state)
    chance = 1.0 / len(moves)
    return random.Random(seed).choice(moves), [(move, chance) for move in moves]


def greedy_key(game: Game, state: Any, move: Any) -> tuple[int, int, float]:
    """Best immediate points, then most cards taken (the played card included), then the
    least given up: lay or spend the card that is worth least kept (not 2C, TD, J, A, or a
    sweeping 7D when anything else will do)."""
    written = game.write_move(state, move)
    taken = len(written["capture"]) + 1 if written["capture"] else 0
    return written["points"], taken, -game.hold_value(state, move)


def greedy_player(game: Game, state: Any, seed: str) -> tuple[Any, list[tuple[Any, float]]]:
    """The greedy order of greedy_key; a seeded draw among moves that tie on all three."""
    moves = game.legal_moves(state)
    keys = [greedy_key(game, state, move) for move in moves]
    best = max(keys)
    tied = [move for move, key in zip(moves, keys) if key == best]
    chosen = tied[0] if len(tied) == 1 else random.Random(seed).choice(tied)
    return chosen, [(move, float(key[0])) for move, key in zip(moves, keys)]
