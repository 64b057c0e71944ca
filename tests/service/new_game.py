"""Tricks (tests/games/tricks, the game docs/adding-a-game.md walks through) mounted as
`engine.tricks`, as if it were one more package under engine/."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import engine
from engine import game as registry

GAMES = Path(__file__).resolve().parents[1] / "games"


@contextmanager
def tricks_registered() -> Iterator[None]:
    """Inside, the registry also finds Tricks; leaving, it is forgotten again."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "__path__", [*engine.__path__, str(GAMES)])
        patch.setattr(registry, "_GAMES", dict(registry.games()))
        patch.setattr(registry, "_found", False)
        assert "tricks" in registry.games()
        try:
            yield
        finally:
            for name in [name for name in sys.modules if name.startswith("engine.tricks")]:
                del sys.modules[name]
