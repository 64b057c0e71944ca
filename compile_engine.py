"""The optional compiled build of the engine: mypyc (the compiler black and mypy ship with)
turns the engine's modules into C extensions built in place, one `.so` beside each `.py`,
which Python then imports instead; deleting the `.so` files brings the pure-Python engine
back. `make compiled` runs this script, `make pure` removes what it made
(docs/operations.md, "The compiled engine").

Some modules stay interpreted even in the compiled build:

- `engine/__init__.py` and each game's `__init__.py`: nothing to speed up, and the
  registry's tests extend the package's `__path__` with a game of their own;
- `engine/game.py`: the protocol, the registry and `CardGame`, which every game (one from
  outside the engine too) subclasses; mypyc classes cannot be subclassed by interpreted
  code, and the registry's state is swapped out by the tests that register a game;
- each game's `game.py`: its class body binds the game's functions as attributes
  (`apply = staticmethod(play.apply)`), which mypyc does not compile.

A module's constants (card and move tables, statuses) are declared `Final`: compiled code
then reads each from a C static rather than looking it up in the module's dict on every use
(6.7% of a compiled Basra playout's instructions, docs/benchmarks.md).

Usage: python compile_engine.py (from the repository's root, mypy installed).
"""

import sys
from pathlib import Path

from mypyc.build import mypycify
from setuptools import setup

ROOT = Path(__file__).resolve().parent
# Built in place; what the build leaves besides the .so files goes under build/mypyc.
BUILD_EXT = ["build_ext", "--inplace", "--build-temp", "build/mypyc/temp"]
BUILD_EXT += ["--build-lib", "build/mypyc/lib"]


def compiled_modules() -> list[str]:
    """The engine's modules mypyc compiles, as paths from the root."""
    return [
        path.relative_to(ROOT).as_posix()
        for path in sorted(ROOT.glob("engine/**/*.py"))
        if path.name not in ("__init__.py", "game.py")
    ]


def main() -> None:
    modules = compiled_modules()
    extensions = mypycify(
        ["--ignore-missing-imports", *modules],
        opt_level="3",
        # The shared library of the compiled modules: engine/compiled__mypyc.*.so, inside
        # the package rather than at the root, so it is found wherever the engine is.
        group_name="engine.compiled",
        target_dir="build/mypyc",
    )
    setup(
        name="card-games-engine-compiled",
        ext_modules=extensions,
        script_args=BUILD_EXT,
    )
    print(f"compiled {len(modules)} engine modules", file=sys.stderr)


if __name__ == "__main__":
    main()
