"""The expert level: determinized (perfect-information) Monte Carlo over the seat's
information set.

Each iteration deals the cards the mover cannot see at random, consistently with what it
knows (game.determinize), then plays every legal move followed by a fast playout of the
rest of the round on that same deal (the game's search knowledge, engine/bots/search.py).
A move's value is its mean point difference for the mover's side; the best mean wins.
Using the same deal and playout seed for every move of an iteration compares moves on
equal luck.

The budget is a number of iterations, so a decision depends on the seed alone; a time
budget can cap it further, at the price of reproducibility. A game's search knowledge may
set its own budget (`iterations(moves)`, by the number of legal moves); without it every
decision gets ITERATIONS. Either way a decision plays at most PLAYOUTS playouts (at least
one per legal move), and the generic playouts (a game without search knowledge of its own)
list at most about LISTED moves in all, so a position with thousands of legal moves holds no
worker for long.
"""

import random
import time
from typing import Any, cast

from engine.bots.search import HORIZON, Generic, moves_to_choose, search_of
from engine.game import Game, Search

ITERATIONS = 24
# Playout policy noise, in points: enough to vary the playouts of one deal a little.
NOISE = 2.0
# The most playouts (iterations times legal moves) a decision spends, a count like the
# budget: far above a usual decision (Bank's 40 deals of a few moves, Basra's 24 of up to
# a dozen), but a Basra table under any_family can offer thousands of captures, and 24
# playouts of each took a minute of CPU, past gunicorn's timeout.
PLAYOUTS = 768
# The most moves a decision's generic playouts list in all (each ply lists the mover's moves):
# PLAYOUTS playouts of HORIZON plies among a handful of moves each, as a usual game's are.
# Counted, not timed, so that a decision depends on its seed alone. Without it a decision
# among 3000 moves played 3000 playouts of 60 plies, each listing 3000 moves: 80 s of CPU.
LISTED = PLAYOUTS * HORIZON * 8


def budget(search: Search, moves: int) -> int:
    """The iterations a decision among `moves` legal moves gets: the game's own count when
    its search knowledge offers one (`iterations(moves)`), else ITERATIONS; fewer when that
    many would spend more than PLAYOUTS playouts, but at least one."""
    offered = getattr(search, "iterations", None)
    wanted = ITERATIONS if offered is None else offered(moves)
    return max(1, min(wanted, PLAYOUTS // moves))


def expert_player(
    game: Game,
    state: Any,
    seed: str,
    iterations: int | None = None,
    seconds: float | None = None,
) -> tuple[Any, list[tuple[Any, float]]]:
    """The move with the best mean playout value over `iterations` deals (default: the
    game's budget, see `budget`; stopping early once `seconds` have passed), and every
    legal move with its mean."""
    deadline = None if seconds is None else time.perf_counter() + seconds
    moves = moves_to_choose(game, state)
    seat = cast(int, game.to_move(state))  # a seat: the match is being played
    search = search_of(game)
    iterations = iterations or budget(search, len(moves))
    if isinstance(search, Generic):
        # Every playout gets its share of LISTED, expecting listings as large as this one.
        search = Generic(game, LISTED / (iterations * len(moves)), len(moves))
    playout = search.playout
    rng = random.Random(seed)
    totals = [0.0] * len(moves)
    done = 0
    while done < iterations and (done == 0 or deadline is None or time.perf_counter() < deadline):
        world = game.determinize(state, seat, rng)
        playout_seed = rng.getrandbits(64)
        for index, move in enumerate(moves):
            totals[index] += playout(world, move, seat, random.Random(playout_seed), NOISE)
        done += 1
    values = [total / done for total in totals]
    best = max(range(len(moves)), key=values.__getitem__)
    return moves[best], list(zip(moves, values))
