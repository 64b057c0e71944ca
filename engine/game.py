"""The small protocol every game implements, and the registry of games.

Bots and the service reach a game only through this protocol, so a second game
registered here gets both for free. States are opaque values to them.
"""

import random
from collections.abc import Mapping
from typing import Any, Protocol

from engine import basra
from engine.basra import hidden
from engine.basra.moves import Move
from engine.basra.scoring import card_points


class Game(Protocol):
    name: str

    def catalogue(self) -> dict[str, Any]:
        """Presets and every rule option with its default."""

    def new(self, rules: Mapping[str, Any], seats: int, seed: str) -> Any:
        """A fresh game; the same rules, seats and seed give the same state."""

    def read(self, data: object) -> Any:
        """The state from its JSON form; raises GameError naming what is inconsistent."""

    def write(self, state: Any) -> dict[str, Any]:
        """The state's JSON form."""

    def to_move(self, state: Any) -> int | None:
        """The seat to move, None once the match is over."""

    def side_of(self, seat: int) -> int:
        """The scoring side a seat plays for."""

    def legal_moves(self, state: Any) -> list[Any]:
        """Every legal move of the seat to move, no duplicates, in a fixed order."""

    def read_move(self, state: Any, data: object) -> Any:
        """The legal move the JSON names; raises GameError saying why it is not legal."""

    def write_move(self, state: Any, move: Any) -> dict[str, Any]:
        """A move's JSON form, with what it earns at once."""

    def apply(self, state: Any, move: Any) -> tuple[Any, list[dict[str, Any]]]:
        """The state after the move and the events that describe what happened."""

    def view(self, state: Any, seat: int) -> dict[str, Any]:
        """What one seat may see."""

    def score(self, state: Any) -> list[dict[str, Any]]:
        """Per-side breakdown of the round as it stands."""

    def determinize(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A full state `seat` cannot tell apart from `state`, the unseen cards dealt at
        random; states differing only in what `seat` cannot see give the same result."""

    def hold_value(self, state: Any, move: Any) -> float:
        """What the mover gives up by spending this move's card (scoring cards, sweepers)."""

    def playout(self, state: Any, move: Any, side: int, rng: random.Random, noise: float) -> float:
        """Play `move` and the rest of the round with a fast built-in policy whose choices
        `noise` (in points) randomises; the round's point difference for `side`."""


class Basra:
    name = "basra"

    def catalogue(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seats": [2, 4],
            "default_preset": "levantine",
            "presets": {name: rules.to_json() for name, rules in basra.PRESETS.items()},
            "options": {k: v for k, v in basra.Rules().to_json().items() if k != "preset"},
        }

    def new(self, rules: Mapping[str, Any], seats: int, seed: str) -> basra.State:
        return basra.new_game(basra.Rules.from_json(dict(rules)), seats, seed)

    def read(self, data: object) -> basra.State:
        return basra.State.from_json(data)

    def write(self, state: basra.State) -> dict[str, Any]:
        return state.to_json()

    def to_move(self, state: basra.State) -> int | None:
        return state.turn

    def side_of(self, seat: int) -> int:
        return seat % 2

    def legal_moves(self, state: basra.State) -> list[Move]:
        return basra.legal_moves(state)

    def read_move(self, state: basra.State, data: object) -> Move:
        return basra.read_move(state, data)

    def write_move(self, state: basra.State, move: Move) -> dict[str, Any]:
        cards = (*move.capture, move.card) if move.capture else ()
        points = move.basra_points + (card_points(cards) if state.rules.card_points else 0)
        return {
            "card": move.card,
            "capture": list(move.capture),
            "basra": move.basra,
            "basra_points": move.basra_points,
            "points": points,
        }

    def apply(self, state: basra.State, move: Any) -> tuple[basra.State, list[dict[str, Any]]]:
        return basra.apply(state, move)

    def view(self, state: basra.State, seat: int) -> dict[str, Any]:
        return basra.view(state, seat)

    def score(self, state: basra.State) -> list[dict[str, Any]]:
        return basra.score(state)

    def determinize(self, state: basra.State, seat: int, rng: random.Random) -> basra.State:
        return hidden.determinize(state, seat, rng)

    def hold_value(self, state: basra.State, move: Move) -> float:
        return hidden.hold_value(move.card, state.rules)

    def playout(
        self, state: basra.State, move: Move, side: int, rng: random.Random, noise: float
    ) -> float:
        return hidden.playout(state, move, side, rng, noise)


GAMES: dict[str, Game] = {game.name: game for game in (Basra(),)}


def get_game(name: str) -> Game:
    return GAMES[name]
