"""Bank behind the game protocol of engine/game.py."""

import random
from collections.abc import Mapping
from typing import Any

from engine.bank import hidden, moves, play
from engine.bank.moves import Move
from engine.bank.rules import DEFAULT_PRESET, PRESETS, SEAT_COUNTS, Rules
from engine.bank.search import BankSearch
from engine.bank.state import MATCH_OVER, State
from engine.game import Events, Outcome, register


class Bank:
    """Bank for the registry: every player is its own side."""

    name = "bank"
    search = BankSearch()

    def catalogue(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seats": list(SEAT_COUNTS),
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
        """Every player plays for itself: a side is a seat."""
        return seat

    def to_move(self, state: State) -> int | None:
        return state.turn

    def legal_moves(self, state: State) -> list[Move]:
        return moves.legal_moves(state)

    def read_move(self, state: State, data: object) -> Move:
        return moves.read_move(state, data)

    def write_move(self, state: State, move: Move) -> dict[str, Any]:
        return moves.write_move(move)

    def apply(self, state: State, move: Move) -> tuple[State, Events]:
        return play.apply(state, move)

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return play.view(state, seat)

    def events_for(self, events: Events, seat: int | None) -> Events:
        """Everything is public but the card another seat draws (a spectator sees none)."""
        return [
            {**event, "card": None}
            if event["type"] == "draw" and (seat is None or event["seat"] != seat)
            else event
            for event in events
        ]

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
        return Outcome(winners=state.winners, points=state.scores)

    def determinize(self, state: State, seat: int, rng: random.Random) -> State:
        return hidden.determinize(state, seat, rng)


register(Bank())
