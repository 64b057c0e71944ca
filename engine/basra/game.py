"""Basra behind the game protocol of engine/game.py."""

import random
from collections.abc import Mapping
from typing import Any

from engine.basra import hidden, play
from engine.basra.moves import Move
from engine.basra.rules import DEFAULT_PRESET, PRESETS, Rules
from engine.basra.state import MATCH_OVER, State, side_of
from engine.game import Events, Outcome, register


class BasraSearch:
    """What Basra's computer players know beyond the rules: a greedy order and a fast
    playout of the rest of the round (engine/basra/hidden.py)."""

    def move_value(self, state: State, move: Move) -> tuple[int, int, float]:
        """Best immediate points, then most cards taken (the played card included), then
        the least given up: lay or spend the card that is worth least kept (not 2C, TD, J,
        A, or a sweeping 7D when anything else will do)."""
        taken = len(move.capture) + 1 if move.capture else 0
        points = play.write_move(state, move)["points"]
        return points, taken, -hidden.hold_value(move.card, state.rules)

    def playout(
        self, state: State, move: Move, seat: int, rng: random.Random, noise: float
    ) -> float:
        return hidden.playout(state, move, side_of(seat), rng, noise)


class Basra:
    name = "basra"
    search = BasraSearch()

    def catalogue(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seats": list(Rules().seats_allowed),
            "default_preset": DEFAULT_PRESET,
            "presets": {name: rules.to_json() for name, rules in PRESETS.items()},
            "options": {k: v for k, v in Rules().to_json().items() if k != "preset"},
        }

    def new(self, rules: Mapping[str, Any], seats: int, seed: str) -> State:
        return play.new_game(Rules.from_json(dict(rules)), seats, seed)

    def read(self, data: object) -> State:
        return State.from_json(data)

    def write(self, state: State) -> dict[str, Any]:
        return state.to_json()

    def seats(self, state: State) -> int:
        return state.seats

    def side_of(self, state: State, seat: int) -> int:
        return side_of(seat)

    def to_move(self, state: State) -> int | None:
        return state.turn

    def legal_moves(self, state: State) -> list[Move]:
        return play.legal_moves(state)

    def read_move(self, state: State, data: object) -> Move:
        return play.read_move(state, data)

    def write_move(self, state: State, move: Move) -> dict[str, Any]:
        return play.write_move(state, move)

    def apply(self, state: State, move: Move) -> tuple[State, Events]:
        return play.apply(state, move)

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return play.view(state, seat)

    def events_for(self, events: Events, seat: int | None) -> Events:
        """Basra's events are public: a deal says how many cards, never which."""
        return events

    def score(self, state: State) -> list[dict[str, Any]]:
        return play.score(state)

    def standing(self, state: State) -> list[float]:
        if state.status == MATCH_OVER:
            return [float(score) for score in state.scores]
        running = play.score(state)
        return [float(banked + side["total"]) for banked, side in zip(state.scores, running)]

    def outcome(self, state: State) -> Outcome | None:
        if state.status != MATCH_OVER:
            return None
        seats = range(state.seats)
        return Outcome(
            winners=tuple(seat for seat in seats if side_of(seat) == state.winner),
            points=tuple(state.scores[side_of(seat)] for seat in seats),
        )

    def determinize(self, state: State, seat: int, rng: random.Random) -> State:
        return hidden.determinize(state, seat, rng)


register(Basra())
