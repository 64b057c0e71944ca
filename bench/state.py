"""The cost of a state's JSON in process: `python -m bench.state`.

For every registered game, mid-round states of seeded random matches (the first round, once
about half its cards are played) are read from their JSON form and written back through
the game protocol, as every stateless request does. Each read takes a form parsed afresh by
orjson, outside the timing, as a request's body is: its strings are new objects, not the
engine's own with their hashes known. Beside it, orjson parsing and writing the very same
state: the floor the bytes on the wire cost. Every figure is the best of three rounds taken
in turn over the games. Target: read + write <= 30 us for Basra and Bank; the other games'
figures are reported beside the same budget.
"""

import argparse
import random
import time
import timeit
from collections.abc import Callable

import orjson

from bench.report import Target, print_targets
from engine.game import Game, games

BUDGET_MICROSECONDS = 30.0
TARGETED = {"basra", "bank"}  # games the budget is a target for; the others are reported


def mid_round_states(game: Game, count: int) -> list[dict]:
    """The JSON of `count` states, each halfway through the first round of its match."""
    catalogue = game.catalogue()
    rules, seats = {"preset": catalogue["default_preset"]}, min(catalogue["seats"])
    found = []
    for number in range(count):
        rng = random.Random(number)
        state, history = game.new(rules, seats, f"state-{number}"), []
        first = game.write(state).get("round")
        while game.to_move(state) is not None and game.write(state).get("round") == first:
            history.append(state)
            state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
        found.append(game.write(history[len(history) // 2]))
    return found


CALLS = 20  # calls of the work a timing, the best of REPEATS timings kept
REPEATS = 5


def microseconds(work: Callable[[], object], items: int, setup: Callable[[], None]) -> float:
    """The best of REPEATS timings in CPU time (being descheduled on a busy machine is not
    the work's own cost), per item; `setup` runs untimed before each."""
    best = min(timeit.repeat(work, setup, number=CALLS, repeat=REPEATS, timer=time.process_time))
    return best / (CALLS * items) * 1e6


# Every game's timings are taken this many times in turn and the best of each kept, so that
# a few slow seconds on a shared machine weigh on no game alone.
ROUNDS = 3
Timing = tuple[Callable[[], object], Callable[[], None]]  # the work, its untimed setup


def timings(game: Game, count: int) -> dict[str, Timing]:
    """The read, the write and orjson's round trip of `count` mid-round states of `game`."""
    forms = mid_round_states(game, count)
    states = [game.read(form) for form in forms]
    texts = [orjson.dumps(form) for form in forms]
    parsed: list[list[dict]] = []  # a batch of fresh forms for each call of a timing

    def parse() -> None:
        parsed[:] = [[orjson.loads(text) for text in texts] for _ in range(CALLS)]

    return {
        "read": (lambda: [game.read(form) for form in parsed.pop()], parse),
        "write": (lambda: [game.write(state) for state in states], lambda: None),
        "orjson": (lambda: [orjson.dumps(orjson.loads(text)) for text in texts], lambda: None),
    }


def measure(count: int) -> list[Target]:
    """Print read, write and orjson's round trip per game; return the read + write targets."""
    works = {name: timings(game, count) for name, game in sorted(games().items())}
    best = {name: dict.fromkeys(timed, float("inf")) for name, timed in works.items()}
    for _ in range(ROUNDS):
        for name, timed in works.items():
            for column, (work, setup) in timed.items():
                best[name][column] = min(best[name][column], microseconds(work, count, setup))
    print(f"state JSON, {count} mid-round states per game, in process (us per state):")
    print(f"  {'game':<10}{'read':>8}{'write':>8}{'both':>8}{'orjson':>8}")
    targets = []
    for name, figures in best.items():
        read, write, wire = figures["read"], figures["write"], figures["orjson"]
        print(f"  {name:<10}{read:>8.1f}{write:>8.1f}{read + write:>8.1f}{wire:>8.1f}")
        goal = 1.0 if name in TARGETED else None
        targets.append(Target(f"{name} state read + write", read + write, "us",
                              BUDGET_MICROSECONDS, "budget", goal, higher=False))  # fmt: skip
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=50, help="mid-round states per game")
    args = parser.parse_args()
    print_targets(measure(args.states), "state JSON targets")


if __name__ == "__main__":
    main()
