"""Instructions an engine's work takes, counted by valgrind:
`python -m bench.instructions [--game bank] [--work playouts] [--count 20] [--root DIR]`
(`make valgrind` installs it).

On a shared machine the time a workload takes drifts by a quarter from one run to the next,
too much to tell a change of a few percent; the instructions it executes do not drift.
cachegrind counts them for a script run twice, once doing nothing but its warm-up and once
doing `--count` more units of work, and the difference over the work done is the figure:
the interpreter's start, the imports and the warm-up are taken off. `PYTHONHASHSEED=0`
keeps set and dict order, and so the path through the code, the same in both runs.

- `playouts`: random playouts of whole matches through the game protocol (bench.engine's),
  after 30 that warm the engine's caches; per action.
- `state`: bench.state's mid-round states read from their JSON form and written back, as a
  stateless request does, each form parsed afresh by orjson as a request's body is; per
  state. That parse is counted with it: about a fifth of the figure, the same in any
  checkout. This work allocates and frees a whole parsed form a state, and its count moves
  with the heap's layout: by up to a tenth from one virtualenv or checkout to another with
  the engine unchanged. Compare checkouts within one batch, and read a change of a few
  percent as no change (docs/benchmarks.md).
- `expert`: the expert's decision at each of the first `--count` positions with a real
  choice among bench.bots' positions; per decision, with a digest of the moves chosen, so
  a change that should leave the decisions alone can be seen to.

`--root` measures another checkout's engine (a copy of the repository before a change),
pure or compiled as it stands there: `bench/` is this checkout's.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from bench.bots import positions
from bench.engine import our_playouts
from bench.state import mid_round_states
from engine.bots import choose_move
from engine.game import get_game

ROOT = Path(__file__).resolve().parent.parent
WARM_UP_PLAYOUTS = 30


def playouts(game_name: str, count: int) -> tuple[int, str]:
    """`count` random playouts after the warm-up: the actions they took, and no digest."""
    game = get_game(game_name)
    warm_up = our_playouts(game)
    for _ in range(WARM_UP_PLAYOUTS):
        warm_up()
    timed = our_playouts(game, seed=11)
    return sum(timed() for _ in range(count)), ""


def expert(game_name: str, count: int) -> tuple[int, str]:
    """The expert's decisions at the first `count` positions with a real choice: how many,
    and a digest of the moves chosen."""
    game = get_game(game_name)
    chosen = [s for s in positions(game_name, 2, 600) if len(game.legal_moves(s)) > 1][:count]
    moves = [choose_move(game, state, "expert", f"bench/{n}") for n, state in enumerate(chosen)]
    return len(moves), hashlib.sha256(repr(moves).encode()).hexdigest()[:16]


def state_json(game_name: str, count: int) -> tuple[int, str]:
    """bench.state's mid-round states each read from its JSON form and written back,
    `count` times over: how many states."""
    game = get_game(game_name)
    texts = [orjson.dumps(form) for form in mid_round_states(game, 50)]
    for _ in range(count):
        for text in texts:
            game.write(game.read(orjson.loads(text)))
    return count * len(texts), ""


WORK = {
    "playouts": (playouts, "action"),
    "expert": (expert, "decision"),
    "state": (state_json, "state"),
}


def counted(root: Path, game: str, work: str, count: int) -> tuple[int, int, str]:
    """Instructions, units of work done and digest of one run of `work` under cachegrind."""
    child = [sys.executable, "-m", "bench.instructions", "--game", game, "--work", work,
             "--count", str(count), "--child"]  # fmt: skip
    valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                "--cachegrind-out-file=/dev/null"]  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        # The measured checkout's engine beside this checkout's bench/, whatever bench/ the
        # other holds: a directory of the two, the child's working directory and only path.
        (Path(scratch) / "engine").symlink_to(root.resolve() / "engine")
        (Path(scratch) / "bench").symlink_to(ROOT / "bench")
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": scratch}
        done = subprocess.run([*valgrind, *child], env=env, cwd=scratch, capture_output=True,
                              text=True, check=True)  # fmt: skip
    instructions = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if instructions is None:
        raise RuntimeError(f"cachegrind printed no instruction count:\n{done.stderr}")
    units, digest = done.stdout.split()
    return int(instructions.group(1).replace(",", "")), int(units), digest.strip("-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="bank")
    parser.add_argument("--work", choices=WORK, default="playouts")
    parser.add_argument("--count", type=int, default=20, help="playouts, decisions, rounds")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    run, unit = WORK[args.work]
    if args.child:  # inside cachegrind: do the work, print how much and its digest
        units, digest = run(args.game, args.count)
        print(units, digest or "-")
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: `make valgrind` installs it")
    base, _, _ = counted(args.root, args.game, args.work, 0)
    total, units, digest = counted(args.root, args.game, args.work, args.count)
    print(f"{args.root} {args.game} {args.work}: {units} {unit}s, "
          f"{(total - base) / units:,.0f} instructions per {unit}"
          + (f", moves digest {digest}" if digest else ""))  # fmt: skip


if __name__ == "__main__":
    main()
