"""Computer players for any game registered in engine/game.py.

Every level decides from the mover's view only and takes its randomness from `seed`
alone, so the same state, level and seed always give the same move.
"""

from collections.abc import Callable
from typing import Any

from engine.bots import expert, simple
from engine.game import Game

LEVELS: tuple[str, ...] = ("random", "greedy", "expert")

Alternatives = list[tuple[Any, float]]
Player = Callable[[Game, Any, str], tuple[Any, Alternatives]]

PLAYERS: dict[str, Player] = {
    "random": simple.random_player,
    "greedy": simple.greedy_player,
    "expert": expert.expert_player,
}


def hint(game: Game, state: Any, level: str, seed: str) -> tuple[Any, Alternatives]:
    """The move `level` would play and the alternatives it weighed, each with its estimated
    value for the mover (random: the chance it gave the move; greedy: the immediate points;
    expert: the mean round point difference of its playouts)."""
    if level not in PLAYERS:
        raise ValueError(f"unknown level {level!r}; known: {list(LEVELS)}")
    if game.to_move(state) is None:
        raise ValueError("the match is over; there is no move to choose")
    return PLAYERS[level](game, state, seed)


def choose_move(game: Game, state: Any, level: str, seed: str) -> Any:
    """One of game.legal_moves(state), chosen by the bot `level`."""
    return hint(game, state, level, seed)[0]
