"""Play full matches between two bot levels and report who wins, seat by seat.

    python -m engine.bots.arena --game basra --a expert --b greedy --matches 400
    python -m engine.bots.arena --game bank --seats 3 --a expert --b greedy --matches 200

Level `a` holds every seat of one side and `b` all the others. The side rotates: in match
`i` it is the side of seat `i mod seats`, so `a` starts from every position in turn. Match
`i` is dealt from the seed "<seed>/<i>" and every bot decision gets its own seed derived from
it, so a run is reproducible whatever --jobs is. Results come from the game's `outcome`
only: a win shared between sides counts as a win for each of them (and is counted apart).
"""

import argparse
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import cast

from engine.bots import LEVELS, choose_move
from engine.game import MatchResult as Outcome
from engine.game import get_game

Z95 = 1.959963984540054


@dataclass
class MatchResult:
    first: int  # the seat that match `i` gave to `a` (a holds its whole side)
    a_seats: tuple[int, ...]
    winners: tuple[int, ...]
    points: tuple[int, ...]  # per seat, the final match points
    plies: int
    times: dict[str, list[float]]

    @property
    def a_won(self) -> bool:
        return any(seat in self.winners for seat in self.a_seats)


@dataclass
class Tally:
    """Totals over matches; per-seat figures are kept by position relative to `a`'s first
    seat (0 is `a`, 1 the next seat clockwise, ...)."""

    matches: int = 0
    a_wins: int = 0
    shared: int = 0
    plies: int = 0
    wins: dict[int, int] = field(default_factory=dict)
    points: dict[int, int] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=lambda: {"a": [], "b": []})

    def add(self, result: MatchResult) -> None:
        seats = len(result.points)
        self.matches += 1
        self.a_wins += result.a_won
        self.shared += result.a_won and not set(result.winners) <= set(result.a_seats)
        self.plies += result.plies
        for seat in range(seats):
            offset = (seat - result.first) % seats
            self.wins[offset] = self.wins.get(offset, 0) + (seat in result.winners)
            self.points[offset] = self.points.get(offset, 0) + result.points[seat]
        for who in ("a", "b"):
            self.times[who].extend(result.times[who])


def play_match(
    game_name: str, a: str, b: str, preset: str, seats: int, seed: str, index: int
) -> MatchResult:
    """One full match; `a` holds the side of seat `index % seats`."""
    game = get_game(game_name)
    match_seed = f"{seed}/{index}"
    state = game.new({"preset": preset} if preset else {}, seats, match_seed)
    first = index % seats
    a_side = game.side_of(state, first)
    a_seats = tuple(seat for seat in range(seats) if game.side_of(state, seat) == a_side)
    levels = {"a": a, "b": b}
    times: dict[str, list[float]] = {"a": [], "b": []}
    ply = 0
    while (seat := game.to_move(state)) is not None:
        who = "a" if seat in a_seats else "b"
        started = time.perf_counter()
        move = choose_move(game, state, levels[who], f"{match_seed}/{ply}")
        times[who].append(time.perf_counter() - started)
        state, _ = game.apply(state, move)
        ply += 1
    outcome = cast(Outcome, game.outcome(state))  # the loop ends with the match
    return MatchResult(first, a_seats, outcome.winners, outcome.points, ply, times)


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
        f"arena: {args.game}, {a} (a) vs {b} (b), {tally.matches} matches, "
        f"preset {args.preset or 'default'}, {args.seats} seats, seed {args.seed!r}, "
        f"{args.jobs} job(s), {elapsed:.1f} s",
        f"match win rate of {a}: {tally.a_wins}/{tally.matches} = "
        f"{tally.a_wins / tally.matches:.1%} (95% Wilson CI {low:.1%} - {high:.1%}), "
        f"{tally.shared} of them shared",
        f"moves played: {tally.plies}",
    ]
    for offset in sorted(tally.wins):
        label = "a" if offset == 0 else f"a+{offset}"
        wins, points = tally.wins[offset], tally.points[offset]
        lines.append(
            f"seat {label:>3}: {wins} wins ({wins / tally.matches:.1%}), "
            f"{points / tally.matches:7.1f} match points on average"
        )
    for who, level in (("a", a), ("b", b)):
        times = tally.times[who]
        if times:
            lines.append(
                f"{who} {level:>7}: {len(times)} moves, median "
                f"{statistics.median(times) * 1e3:.2f} ms/move, "
                f"p95 {percentile(times, 0.95) * 1e3:.2f} ms/move"
            )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.bots.arena", description=__doc__)
    parser.add_argument("--a", choices=LEVELS, default="expert")
    parser.add_argument("--b", choices=LEVELS, default="greedy")
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--preset", default="", help="default: the game's default preset")
    parser.add_argument("--seats", type=int, default=2)
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
