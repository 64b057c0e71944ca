"""The small protocol every game implements, and the registry of games.

Bots and the service reach a game only through this protocol, so a new game is one new
package under `engine/` whose `game` module calls `register`: this module imports no game,
it finds them (`engine/<package>/game.py`) the first time the registry is read. States and
moves are opaque values to everything above the game.
"""

import importlib
import importlib.util
import pkgutil
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.errors import GameError

Events = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished match ended: the winning seats (every seat of a winning side,
    ascending; several when a win is shared) and each seat's final match points."""

    winners: tuple[int, ...]
    points: tuple[int, ...]


class Search(Protocol):
    """Search knowledge a game may offer its computer players (in the spirit of OpenSpiel's
    evaluators). Without it, `engine.bots.search.Generic` derives both from the protocol.
    It may also offer `iterations(moves) -> int`, the expert's deals for a decision among
    that many legal moves (engine/bots/expert.py `budget`)."""

    def move_value(self, state: Any, move: Any) -> tuple:
        """What the move is worth to its mover at once: a tuple whose first element is the
        points it earns now and the rest the game's tie-breaks; the greatest is the greedy
        choice."""

    def playout(self, state: Any, move: Any, seat: int, rng: random.Random, noise: float) -> float:
        """Play `move`, then the rest of the round or deal with a fast policy that `noise`
        (in points) randomises; the point difference it ends with for `seat`'s side (its
        points minus the best other side's)."""


class Game(Protocol):
    name: str
    search: Search | None

    def catalogue(self) -> dict[str, Any]:
        """The name, the seat counts, the default preset, every preset resolved and every
        rule option with its default."""

    def new(self, rules: Mapping[str, Any], seats: int, seed: str) -> Any:
        """A fresh match; the same rules, seats and seed give the same state. Raises
        GameError naming a bad option (`preset`, an option's name) or `seats`."""

    def read(self, data: object) -> Any:
        """The state from its JSON form; raises GameError naming what is inconsistent."""

    def write(self, state: Any) -> dict[str, Any]:
        """The state's JSON form; `read(write(s)) == s`."""

    def seats(self, state: Any) -> int:
        """How many seats play."""

    def side_of(self, state: Any, seat: int) -> int:
        """The scoring side `seat` plays for (a partnership, or the seat itself)."""

    def to_move(self, state: Any) -> int | None:
        """The seat to move, None once the match is over."""

    def legal_moves(self, state: Any) -> list[Any]:
        """Every legal move of the seat to move, no duplicates, in a fixed order."""

    def read_move(self, state: Any, data: object) -> Any:
        """The legal move the JSON names; raises GameError saying why it is not legal."""

    def write_move(self, state: Any, move: Any) -> dict[str, Any]:
        """A move's JSON form; `read_move` accepts it back."""

    def apply(self, state: Any, move: Any) -> tuple[Any, Events]:
        """The state after a legal move and the events that describe what happened."""

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        """What one seat may see (None: a spectator, who sees public information only)."""

    def events_for(self, events: Events, seat: int | None) -> Events:
        """The events as one seat (None: a spectator) may see them."""

    def score(self, state: Any) -> list[dict[str, Any]]:
        """Per-side breakdown of the round or deal as it stands."""

    def standing(self, state: Any) -> list[float]:
        """Per side: banked match points plus what the round or deal in play has earned so
        far; what generic search compares."""

    def outcome(self, state: Any) -> Outcome | None:
        """How the match ended, None while it is being played."""

    def determinize(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A full state `seat` cannot tell apart from `state`, the unseen cards dealt at
        random; states differing only in what `seat` cannot see give the same result."""


class UnknownGame(GameError):
    """A game name that is not registered."""


_GAMES: dict[str, Game] = {}
_found = False


def register(game: Game) -> Game:
    """Make `game` reachable by its name; each game's own `game` module calls this."""
    _GAMES[game.name] = game
    return game


def games() -> dict[str, Game]:
    """Every registered game by name, in name order."""
    global _found
    if not _found:
        import engine

        for package in pkgutil.iter_modules(engine.__path__):
            if package.ispkg and importlib.util.find_spec(f"engine.{package.name}.game"):
                importlib.import_module(f"engine.{package.name}.game")
        _found = True
    return dict(sorted(_GAMES.items()))


def get_game(name: str) -> Game:
    """The game called `name`; raises UnknownGame listing the known names."""
    known = games()
    if name not in known:
        raise UnknownGame("game", f"unknown game '{name}'; known games: {', '.join(known)}")
    return known[name]
