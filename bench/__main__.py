"""Every benchmark in one run and one table of targets: `python -m bench` (`make bench`).

Each row is a figure beside the peer or floor it was measured against in the same run
(OpenSpiel's and RLCard's games, a bare echo of the same bodies, stateless apply, a stated
budget such as the Bank expert's 50 ms a decision), their ratio, the goal and pass/FAIL; a
peer that is missing is a skip. Absolute figures drift with the machine's load, the ratios
much less; the table ends with the machine's load average at the start and at the end of
the run. `--quick` shortens every measurement.

The engine's playouts are measured twice: pure Python (what `pip install` ships), and at the
end on its mypyc build (`make bench-compiled`: `make compiled`, then `make pure` again
whatever happens), in a process of its own with its peers beside it. `--pure` leaves the
compiled build out.
"""

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

import orjson

from bench import bots, engine, http, sessions, state
from bench.report import Target, print_targets

MAKE = ["make", "--no-print-directory"]


def compiled_playouts(seconds: float) -> list[Target]:
    """The engine's playout targets on its mypyc build, beside the same peers: `make
    bench-compiled` (bench.engine in a process of its own, since a process imports one
    build; the engine is pure again afterwards)."""
    with tempfile.TemporaryDirectory() as scratch:
        found = Path(scratch) / "playouts.json"
        arguments = f"--seconds {seconds} --playouts-to {found}"
        subprocess.run([*MAKE, "bench-compiled", f"BENCH_ENGINE_ARGS={arguments}"], check=True)
        return [Target(**target) for target in orjson.loads(found.read_bytes())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, rougher figures")
    parser.add_argument("--pure", action="store_true", help="leave out the compiled engine")
    args = parser.parse_args()
    scale = 0.25 if args.quick else 1.0
    load_before = os.getloadavg()
    targets = []
    print("== engine")
    targets += engine.measure(4 * scale, 300, round(300 * scale), round(1000 * scale))
    print("\n== state JSON")
    targets += state.measure(50)
    print("\n== bots")
    targets += bots.measure(round(600 * scale))
    print("\n== stateless HTTP")
    targets += http.measure(max(1, round(3 * scale)), 1, [16, 64], 300, [])
    print("\n== hosted sessions")
    for connections in (16, 64):  # as the HTTP rows: a round fills up with more of them
        targets += sessions.measure(max(1, round(10 * scale)), connections)
    if not args.pure:
        print("\n== engine, compiled")
        targets += compiled_playouts(4 * scale)
    print_targets(targets, "all targets")
    print(f"\nload average (1, 5, 15 min) of this {os.cpu_count()}-core machine: "
          f"{' '.join(f'{x:.1f}' for x in load_before)} at the start, "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")  # fmt: skip


if __name__ == "__main__":
    main()
