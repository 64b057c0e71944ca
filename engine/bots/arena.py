"""Play full matches between two bot levels and report who wins.

    python -m engine.bots.arena --a expert --b greedy --matches 400 --preset levantine

Seats alternate: in even-numbered matches `a` holds side 0 (seat 0 moves first), in odd
ones side 1. Match `i` is dealt from the seed "<seed>/<i>" and every bot decision gets its
own seed derived from it, so a run is reproducible whatever --jobs is.
"""

import argparse
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from engine.bots import LEVELS, choose_move
from engine.game import get_game

Z95 = 1.959963984540054


@dataclass
class MatchResult:
    a_won: bool
    rounds: int
    points: dict[str, int]
    times: dict[str, list[float]]


@dataclass
class Tally:
    matches: int = 0
    a_wins: int = 0
    rounds: int = 0
    points: dict[str, int] = field(default_factory=lambda: {"a": 0, "b": 0})
    times: dict[str, list[float]] = field(default_factory=lambda: {"a": [], "b": []})

    def add(self, result: MatchResult) -> None:
        self.matches += 1
        self.a_wins += result.a_won
        self.rounds += result.rounds
        for who in ("a", "b"):
            self.points[who] += result.points[who]
            self.times[who].extend(result.times[who])


def play_match(
    game_name: str, a: str, b: str, preset: str, seats: int, seed: str, index: int
) -> MatchResult:
    """One full match; `a` plays side index % 2."""
    game = get_game(game_name)
    match_seed = f"{seed}/{index}"
    state = game.new({"preset": preset}, seats, match_seed)
    a_side = index % 2
    levels = {"a": a, "b": b}
    points = {"a": 0, "b": 0}
    times: dict[str, list[float]] = {"a": [], "b": []}
    rounds = 0
    ply = 0
    while (seat := game.to_move(state)) is not None:
        who = "a" if game.side_of(seat) == a_side else "b"
        started = time.perf_counter()
        move = choose_move(game, state, levels[who], f"{match_seed}/{ply}")
        times[who].append(time.perf_counter() - started)
        state, events = game.apply(state, move)
        ply += 1
        for event in events:
            if event["type"] == "round_end":
                rounds += 1
                for side, breakdown in enumerate(event["sides"]):
                    points["a" if side == a_side else "b"] += breakdown["total"]
    return MatchResult(game.write(state)["winner"] == a_side, rounds, points, times)


def wilson(wins: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate."""
    if total == 0:
        return 0.0, 1.0
    rate = wins / total
    centre = (rate + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total))
    return max(0.0, centre - half / (1 + z * z / total)), min(
        1.0, centre + half / (1 + z * z / total)
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(tally: Tally, a: str, b: str, args: argparse.Namespace, elapsed: float) -> str:
    low, high = wilson(tally.a_wins, tally.matches)
    lines = [
        f"arena: {a} (a) vs {b} (b), {tally.matches} matches, preset {args.preset}, "
        f"{args.seats} seats, seed {args.seed!r}, {args.jobs} job(s), {elapsed:.1f} s",
        f"match win rate of {a}: {tally.a_wins}/{tally.matches} = "
        f"{tally.a_wins / tally.matches:.1%} (95% Wilson CI {low:.1%} - {high:.1%})",
        f"rounds played: {tally.rounds}",
    ]
    for who, level in (("a", a), ("b", b)):
        times = tally.times[who]
        lines.append(
            f"{who} {level:>7}: {tally.points[who] / max(1, tally.rounds):6.2f} points/round, "
            f"{len(times)} moves, median {statistics.median(times) * 1e3:.2f} ms/move, "
            f"p95 {percentile(times, 0.95) * 1e3:.2f} ms/move"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.bots.arena", description=__doc__)
    parser.add_argument("--a", choices=LEVELS, default="expert")
    parser.add_argument("--b", choices=LEVELS, default="greedy")
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--preset", default="levantine")
    parser.add_argument("--seats", type=int, choices=(2, 4), default=2)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", default="arena")
    parser.add_argument("--game", default="basra")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> Tally:
    tally = Tally()
    jobs = [
        (args.game, args.a, args.b, args.preset, args.seats, args.seed, index)
        for index in range(args.matches)
    ]
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=args.matches, unit="match", file=sys.stderr)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for result in pool.map(play_match, *zip(*jobs), chunksize=1):
                tally.add(result)
                if bar:
                    bar.update()
    else:
        for job in jobs:
            tally.add(play_match(*job))
            if bar:
                bar.update()
    if bar:
        bar.close()
    return tally


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.perf_counter()
    tally = run(args)
    print(report(tally, args.a, args.b, args, time.perf_counter() - started))


if __name__ == "__main__":
    main()
