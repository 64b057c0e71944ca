"""The state: an immutable value and its JSON form, read back with engine/fields.py."""

from typing import Any, NamedTuple

from engine import fields
from engine.cards import canonical
from engine.errors import RulesError, StateError

from .cards import CARDS, DECK
from .rules import Rules, check_seats

PLAYING, MATCH_OVER = "playing", "match_over"
REQUIRED = ("game", "rules", "seats", "hands", "trick", "leader", "turn", "won", "status")


class State(NamedTuple):
    rules: Rules
    seats: int
    hands: tuple[tuple[str, ...], ...]
    trick: tuple[str, ...]  # the cards of the trick in play, from the leader's on
    leader: int
    turn: int | None
    won: tuple[tuple[str, ...], ...]  # per seat, the cards of the tricks it took: every card
    # stays in the state, as docs/adding-a-game.md asks
    status: str
    seed: str | None

    def to_json(self) -> dict[str, Any]:
        data = {
            "game": "tricks", "rules": self.rules.to_json(), "seats": self.seats,
            "hands": [list(hand) for hand in self.hands], "trick": list(self.trick),
            "leader": self.leader, "turn": self.turn, "won": [list(pile) for pile in self.won],
            "status": self.status,
        }  # fmt: skip
        if self.seed is not None:
            data["seed"] = self.seed
        return data

    @classmethod
    def from_json(cls, data: object) -> "State":
        data = fields.keys_of(data, REQUIRED, ("seed",))
        if data["game"] != "tricks":
            raise StateError("game", 'must be "tricks"')
        try:
            rules, seats = Rules.from_json(data["rules"]), check_seats(data["seats"])
        except RulesError as error:
            raise fields.under_rules(error) from error

        def cards(value: object, path: str) -> tuple[str, ...]:
            return canonical(fields.cards(value, path, CARDS))

        state = cls(
            rules=rules,
            seats=seats,
            hands=fields.listed(data["hands"], seats, "hands", cards, "seat"),
            trick=fields.cards(data["trick"], "trick", CARDS),
            leader=fields.seat(data["leader"], seats, "leader"),
            turn=fields.seat(data["turn"], seats, "turn", nullable=True),
            won=fields.listed(data["won"], seats, "won", cards, "seat"),
            status=fields.one_value(data["status"], "status", (PLAYING, MATCH_OVER)),
            seed=fields.text(data.get("seed"), "seed", nullable=True),
        )
        check(state)
        return state


def check(state: State) -> None:
    """Every card exactly once; the tricks taken and the hand sizes fit the cards played."""
    held = [card for pile in (*state.hands, state.trick, *state.won) for card in pile]
    if len(set(held)) != len(held) or len(held) != len(DECK):
        raise StateError("hands", "every card must appear exactly once")
    for seat, pile in enumerate(state.won):
        if len(pile) % state.seats:
            raise StateError(f"won.{seat}", f"must hold whole tricks of {state.seats} cards")
    left = len(DECK) // state.seats - sum(map(len, state.won)) // state.seats
    played = {(state.leader + index) % state.seats for index in range(len(state.trick))}
    for seat, hand in enumerate(state.hands):
        if len(hand) != left - (seat in played):
            raise StateError(f"hands.{seat}", f"must hold {left - (seat in played)} cards")
    if (state.status == MATCH_OVER) != (state.turn is None) or len(state.trick) >= state.seats:
        raise StateError("turn", "must be null exactly when the match is over")
    if state.turn is not None and state.turn != (state.leader + len(state.trick)) % state.seats:
        raise StateError("turn", "must be the seat after the last to play to the trick")
