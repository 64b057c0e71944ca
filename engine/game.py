"""The small protocol every game implements, and the registry of games.

Bots and the service reach a game only through this protocol, so a new game is one new
package under `engine/` whose `game` module calls `register`: this module imports no game,
it finds them (`engine/<package>/game.py`) the first time the registry is read. States and
moves are opaque values to everything above the game.
"""

import hashlib
import importlib
import importlib.util
import json
import pkgutil
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.cards import sort_cards
from engine.errors import UnknownGame
from engine.shapes import GameShapes

Events = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class MatchResult:
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
    # Every shape of the game as plain data: its options, state, view, moves, events.
    shapes: GameShapes

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
        """Every legal move of the seat to move, no duplicates, in a fixed order. May raise
        TooLarge when they are too many to list; a game that does may also offer
        `playable_moves(state)`, a few legal moves there, for its computer players
        (engine/bots/search.py `moves_to_choose`)."""

    def read_move(self, state: Any, data: object, /) -> Any:
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

    def outcome(self, state: Any) -> MatchResult | None:
        """How the match ended, None while it is being played."""

    def determinize(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A full state `seat` cannot tell apart from `state`, the unseen cards dealt at
        random; states differing only in what `seat` cannot see give the same result."""


class CardGame:
    """The protocol's boilerplate for a game whose states are values with `seats`, `turn`
    (None once the match is over) and `scores` (banked match points per side), a JSON form
    (`to_json` / `State.from_json`) and rules read by `Rules.from_json`. A game subclasses
    it, names its parts and adds its own functions (legal_moves, read_move, apply...)."""

    name: str
    search: Search | None = None
    rules: Any  # the Rules class: `Rules()` is the default, `Rules.from_json` reads a form
    presets: Mapping[str, Any]
    default_preset: str
    seat_counts: tuple[int, ...]
    state: Any  # the State class: `State.from_json` reads a state
    shapes: GameShapes
    # A fresh match under rules already read: deal(rules, seats, seed).
    deal: Callable[[Any, int, str], Any]
    # Per side, the breakdown of the round or deal as it stands: score(state).
    score: Callable[[Any], list[dict[str, Any]]]

    def catalogue(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seats": list(self.seat_counts),
            "default_preset": self.default_preset,
            "presets": {name: rules.to_json() for name, rules in self.presets.items()},
            "options": {k: v for k, v in self.rules().to_json().items() if k != "preset"},
        }

    def new(self, rules: Mapping[str, Any], seats: int, seed: str) -> Any:
        return self.deal(self.rules.from_json(dict(rules)), seats, seed)

    def read(self, data: object) -> Any:
        return self.state.from_json(data)

    def write(self, state: Any) -> dict[str, Any]:
        return state.to_json()

    def seats(self, state: Any) -> int:
        return state.seats

    def side_of(self, state: Any, seat: int) -> int:
        """Every player plays for itself unless the game says otherwise."""
        return seat

    def to_move(self, state: Any) -> int | None:
        return state.turn

    def events_for(self, events: Events, seat: int | None) -> Events:
        """Events are public unless the game says otherwise."""
        return events

    def standing(self, state: Any) -> list[float]:
        if state.turn is None:
            return [float(score) for score in state.scores]
        running = self.score(state)
        return [float(banked + side["total"]) for banked, side in zip(state.scores, running)]


def replaced(items: tuple, index: int, item: Any) -> tuple:
    """`items` with the one at `index` replaced (states are tuples of tuples)."""
    return (*items[:index], item, *items[index + 1 :])


def next_seed(state: Any) -> str:
    """The seed of the next round or deal: the state's own, or for a state posted without
    one a digest of the state itself (contract: `seed`)."""
    if state.seed is not None:
        return state.seed
    text = json.dumps(state.to_json(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def seat_view(state: Any, seat: int | None) -> dict[str, Any]:
    """What `seat` may see of a state with `hands` and a `stock`: the state's JSON without
    hands, stock and seed, plus its own hand, every hand size and the stock size. A
    spectator (None) sees no hand."""
    data = state.to_json()
    del data["hands"], data["stock"]
    data.pop("seed", None)
    data["seat"] = seat
    if seat is not None:
        data["hand"] = sort_cards(state.hands[seat])
    data["hand_sizes"] = [len(hand) for hand in state.hands]
    data["stock_size"] = len(state.stock)
    return data


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


def most_seats() -> int:
    """The most seats any registered game allows."""
    return max(max(game.catalogue()["seats"]) for game in games().values())


def get_game(name: str) -> Game:
    """The game called `name`; raises UnknownGame listing the known names."""
    known = games()
    if name not in known:
        raise UnknownGame("game", f"unknown game '{name}'; known games: {', '.join(known)}")
    return known[name]
