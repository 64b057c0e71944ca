"""Bot decision time on one core: `python -m bench.bots [--positions 200] [--level expert]`.

Takes every `stride`-th position of seeded greedy-vs-greedy matches (levantine, 2 seats),
so early, middle and late positions of a round all appear, and times one decision of the
level at each in this one process. Prints the median, p95 and worst time per move and the
playouts per second of the expert. Target (issue #5): expert median <= 250 ms per move.
"""

import argparse
import statistics
import time

from engine.bots import LEVELS, choose_move
from engine.bots.expert import ITERATIONS
from engine.game import get_game


def positions(count: int, stride: int = 7) -> list:
    game = get_game("basra")
    found = []
    match = 0
    while len(found) < count:
        state = game.new({"preset": "levantine"}, 2, f"bench-bots-{match}")
        ply = 0
        while game.to_move(state) is not None and len(found) < count:
            if ply % stride == match % stride:
                found.append(state)
            state, _ = game.apply(state, choose_move(game, state, "greedy", f"{match}/{ply}"))
            ply += 1
        match += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--level", choices=LEVELS, default="expert")
    args = parser.parse_args()
    game = get_game("basra")
    corpus = positions(args.positions)
    times = []
    moves = 0
    for index, state in enumerate(corpus):
        moves += len(game.legal_moves(state))
        started = time.perf_counter()
        choose_move(game, state, args.level, f"bench/{index}")
        times.append(time.perf_counter() - started)
    ordered = sorted(times)
    print(f"{args.level}: {len(times)} positions, one process")
    print(
        f"median {statistics.median(times) * 1e3:.2f} ms/move, "
        f"p95 {ordered[int(0.95 * len(ordered))] * 1e3:.2f} ms, worst {ordered[-1] * 1e3:.2f} ms"
    )
    if args.level == "expert":
        print(f"{ITERATIONS * moves / sum(times):,.0f} playouts/s ({ITERATIONS} iterations a move)")


if __name__ == "__main__":
    main()
