"""Bot decision time on one core:
`python -m bench.bots [--game basra] [--seats 2] [--positions 200] [--level expert]`.

Takes every `stride`-th position of seeded greedy-vs-greedy matches (Basra: levantine; any
other game: its default preset), so early, middle and late positions of a round or deal
all appear, and times one decision of the level at each in this one process, in CPU time
(being descheduled on a busy machine is not the bot's own cost). Prints the median, p95
and worst time per move, the same over the positions with a real choice (two legal moves
or more: a forced move costs a Bank expert one playout), and the playouts per second of
the expert. Targets: Basra's expert median <= 250 ms per move (issue #5); Bank's expert
median over the positions with a real choice <= 50 ms (issue #19), the row `make bench`
shows (`measure`).
"""

import argparse
import statistics
import time

from bench.report import Target
from engine.bots import LEVELS, choose_move
from engine.bots.expert import budget
from engine.bots.search import search_of
from engine.game import get_game

PRESETS = {"basra": "levantine"}
# Bank's expert: the median CPU time of a decision with a real choice must stay within it.
BANK_BUDGET_MS = 50.0


def positions(game_name: str, seats: int, count: int, stride: int = 7) -> list:
    game = get_game(game_name)
    preset = PRESETS.get(game_name)
    found = []
    match = 0
    while len(found) < count:
        rules = {"preset": preset} if preset else {}
        state = game.new(rules, seats, f"bench-bots-{match}")
        ply = 0
        while game.to_move(state) is not None and len(found) < count:
            if ply % stride == match % stride:
                found.append(state)
            state, _ = game.apply(state, choose_move(game, state, "greedy", f"{match}/{ply}"))
            ply += 1
        match += 1
    return found


def summary(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    return (
        f"{label}: median {statistics.median(times) * 1e3:.2f} ms/move, "
        f"p95 {ordered[int(0.95 * len(ordered))] * 1e3:.2f} ms, worst {ordered[-1] * 1e3:.2f} ms"
    )


def timed(game_name: str, seats: int, count: int, level: str) -> tuple[list[float], list[float]]:
    """CPU seconds of one `level` decision at each of `count` positions, printed as a
    summary; returns every time and the times of the positions with a real choice."""
    game = get_game(game_name)
    search = search_of(game)
    times: list[float] = []
    choices: list[float] = []
    playouts = 0
    for index, state in enumerate(positions(game_name, seats, count)):
        moves = len(game.legal_moves(state))
        playouts += budget(search, moves) * moves
        started = time.process_time()
        choose_move(game, state, level, f"bench/{index}")
        times.append(time.process_time() - started)
        if moves > 1:
            choices.append(times[-1])
    print(f"{game_name}, {seats} seats, {level}: {len(times)} positions, one process")
    print(summary("every position", times))
    if choices:
        print(summary(f"{len(choices)} positions with a real choice", choices))
    if level == "expert":
        print(f"{playouts / sum(times):,.0f} playouts/s")
    return times, choices


def measure(count: int) -> list[Target]:
    """Time Bank's expert, two seats, over `count` positions; the target row: the median
    over the positions with a real choice against BANK_BUDGET_MS."""
    _, choices = timed("bank", 2, count, "expert")
    median = statistics.median(choices) * 1e3
    name = "bank expert decision, median of real choices"
    return [Target(name, median, "ms", BANK_BUDGET_MS, "budget", 1.0, higher=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="basra")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--level", choices=LEVELS, default="expert")
    args = parser.parse_args()
    timed(args.game, args.seats, args.positions, args.level)


if __name__ == "__main__":
    main()
