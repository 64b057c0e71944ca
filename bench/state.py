"""The cost of a state's JSON in process: `python -m bench.state`.

For every registered game, mid-round states of seeded random matches (the first round, once
about half its cards are played) are read from their JSON form and written back through
the game protocol, as every stateless request does. Each read takes a form parsed afresh by
orjson, outside the timing, as a request's body is: its strings are new objects, not the
engine's own with their hashes known. Beside it, orjson parsing and writing
the very same state: the floor the bytes on the wire cost. Target: read + write <= 30 us
for Basra and Bank; the other games' figures are reported beside the same budget.
"""

import argparse
import random
import time
import timeit

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


def microseconds(work, items: int, setup=lambda: None) -> float:
    """The best of five timings in CPU time (being descheduled on a busy machine is not
    the work's own cost), per item; `setup` runs untimed before each."""
    best = min(timeit.repeat(work, setup, number=CALLS, repeat=REPEATS, timer=time.process_time))
    return best / (CALLS * items) * 1e6


def measure(count: int) -> list[Target]:
    """Print read, write and orjson's round trip per game; return the read + write targets."""
    targets = []
    print(f"state JSON, {count} mid-round states per game, in process (us per state):")
    print(f"  {'game':<10}{'read':>8}{'write':>8}{'both':>8}{'orjson':>8}")
    for name, game in sorted(games().items()):
        forms = mid_round_states(game, count)
        states = [game.read(form) for form in forms]
        texts = [orjson.dumps(form) for form in forms]
        parsed: list[list[dict]] = []  # a batch of fresh forms for each call of a timing

        def parse(texts=texts, parsed=parsed) -> None:
            parsed[:] = [[orjson.loads(text) for text in texts] for _ in range(CALLS)]

        read = microseconds(
            lambda: [game.read(form) for form in parsed.pop()],  # noqa: B023
            count,
            parse,
        )
        write = microseconds(lambda: [game.write(state) for state in states], count)  # noqa: B023
        wire = microseconds(
            lambda: [orjson.dumps(orjson.loads(text)) for text in texts],  # noqa: B023
            count,
        )
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
