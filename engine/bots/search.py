"""Search knowledge every game has through the protocol alone, and the choice between it
and what a game offers of its own (`game.search`)."""

import math
import random
from typing import Any, cast

from engine.errors import TooLarge
from engine.game import Game, Search

# Plies a generic playout plays before it judges the position by `standing`.
HORIZON = 60
# The seed of the one deal of unseen cards a generic move value is judged on: fixed, so the
# value depends on what the mover sees alone.
SIGHT = "generic move value"


def moves_to_choose(game: Game, state: Any) -> list[Any]:
    """The legal moves a computer player chooses among: every one, or, where the game
    refuses to list them all (TooLarge), the few it offers for that (`playable_moves`, an
    optional part of the protocol: Basra's any_family on a crowded table). Raises TooLarge
    for a game that offers none."""
    try:
        return game.legal_moves(state)
    except TooLarge:
        playable = getattr(game, "playable_moves", None)
        if playable is None:
            raise
        return playable(state)


def advantage(game: Game, state: Any, seat: int) -> float:
    """`seat`'s side's standing minus the best other side's (a game with one side, played
    alone, has none to beat: its standing itself)."""
    standing = game.standing(state)
    side = game.side_of(state, seat)
    others = (value for other, value in enumerate(standing) if other != side)
    return standing[side] - max(others, default=0.0)


class Generic:
    """The default evaluator: a move is worth the advantage it leaves its mover on a deal of
    the cards it cannot see (not on the real ones: a move may draw one); a playout plays
    random moves for HORIZON plies (or to the end of the match).

    Each ply of a playout lists the mover's moves, so its cost grows with the game's
    branching: `allowance` bounds the moves one playout lists in all (the expert shares its
    own bound among its playouts), and `branching` is the size of the listing a playout
    expects first (the decision's own). A ply whose listing would overrun what is left is
    not played: the playout judges the position it has reached. A position whose moves the
    game refuses to list (TooLarge) is judged as it stands too."""

    def __init__(self, game: Game, allowance: float = math.inf, branching: int = 0) -> None:
        self.game = game
        self.allowance = allowance
        self.branching = branching

    def move_value(self, state: Any, move: Any) -> tuple[float]:
        seat = cast(int, self.game.to_move(state))  # a seat: the match is being played
        world = self.game.determinize(state, seat, random.Random(SIGHT))
        after, _ = self.game.apply(world, move)
        return (advantage(self.game, after, seat),)

    def playout(self, state: Any, move: Any, seat: int, rng: random.Random, noise: float) -> float:
        game = self.game
        state, _ = game.apply(state, move)
        left, expected = self.allowance, self.branching
        for _ in range(HORIZON):
            if game.to_move(state) is None or expected > left:
                break
            try:
                moves = moves_to_choose(game, state)
            except TooLarge:
                break  # no listing to draw a random move from: judge the position as it is
            if not moves:
                break
            left -= len(moves)
            expected = len(moves)
            state, _ = game.apply(state, rng.choice(moves))
        return advantage(game, state, seat)


def search_of(game: Game) -> Search:
    """The game's own search knowledge, or the generic one."""
    return game.search or Generic(game)
