"""Bot decision time on one core:
`python -m bench.bots [--game basra] [--seats 2] [--positions 200] [--level expert]`.

Takes every `stride`-th position of seeded greedy-vs-greedy matches (Basra: levantine; any
other game: its default preset), so early, middle and late positions of a round or deal
all appear, and times one decision of the level at each in this one process, in CPU time
(being descheduled on a busy machine is not the bot's own cost). Prints the median, p95
and worst time per move, the same over the positions with a choice to make
(two legal moves or more), and the playouts per second of the expert. Target (issue #5):
expert median <= 250 ms per move.
"""

import argparse
import statistics
import time

from engine.bots import LEVELS, choose_move
from engine.bots.expert import budget
from engine.bots.search import search_of
from engine.game import get_game

PRESETS = {"basra": "levantine"}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", default="basra")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--level", choices=LEVELS, default="expert")
    args = parser.parse_args()
    game = get_game(args.game)
    search = search_of(game)
    corpus = positions(args.game, args.seats, args.positions)
    times = []
    choices = []
    playouts = 0
    for index, state in enumerate(corpus):
        moves = len(game.legal_moves(state))
        playouts += budget(search, moves) * moves
        started = time.process_time()
        choose_move(game, state, args.level, f"bench/{index}")
        times.append(time.process_time() - started)
        if moves > 1:
            choices.append(times[-1])
    print(f"{args.game}, {args.seats} seats, {args.level}: {len(times)} positions, one process")
    print(summary("every position", times))
    if choices:
        print(summary(f"{len(choices)} positions with a choice", choices))
    if args.level == "expert":
        print(f"{playouts / sum(times):,.0f} playouts/s")


if __name__ == "__main__":
    main()
