"""The random and greedy levels."""

import random
from typing import Any

from engine.bots.search import moves_to_choose, search_of
from engine.game import Game


def random_player(game: Game, state: Any, seed: str) -> tuple[Any, list[tuple[Any, float]]]:
    """Uniform over the legal moves."""
    moves = moves_to_choose(game, state)
    chance = 1.0 / len(moves)
    return random.Random(seed).choice(moves), [(move, chance) for move in moves]


def greedy_player(game: Game, state: Any, seed: str) -> tuple[Any, list[tuple[Any, float]]]:
    """The move of greatest `move_value` (immediate points first, then the game's own
    tie-breaks); a seeded draw among moves that tie on all of it. Each alternative is
    reported with its immediate points."""
    moves = moves_to_choose(game, state)
    value = search_of(game).move_value
    keys = [value(state, move) for move in moves]
    best = max(keys)
    tied = [move for move, key in zip(moves, keys) if key == best]
    chosen = tied[0] if len(tied) == 1 else random.Random(seed).choice(tied)
    return chosen, [(move, float(key[0])) for move, key in zip(moves, keys)]
