"""A move is a card: follow the suit led when you can."""

from typing import Any, NamedTuple

from engine import fields
from engine.errors import IllegalMove, NotAMove

from .cards import CARDS
from .state import PLAYING, State


class Move(NamedTuple):
    card: str


def legal_moves(state: State) -> list[Move]:
    if state.status != PLAYING:
        return []
    hand = state.hands[state.turn]
    led = state.trick[0][1] if state.trick else None
    following = [card for card in hand if card[1] == led]
    return [Move(card) for card in following or hand]


def read_move(state: State, data: object) -> Move:
    """:raises NotAMove: not {"card": <card>}. :raises IllegalMove: not in hand, or not
    following the suit led when the hand can."""
    if state.status != PLAYING:
        raise IllegalMove("move", "the match is over")
    if isinstance(data, Move):
        data = write_move(state, data)
    if not isinstance(data, dict) or "card" not in data:
        raise NotAMove("move", 'must be an object {"card": ...}')
    move = Move(fields.card(data["card"], "move.card", CARDS, NotAMove))
    if move not in legal_moves(state):
        raise IllegalMove("move.card", f"{move.card} is not a card this seat may play now")
    return move


def write_move(state: State, move: Move) -> dict[str, Any]:
    return {"card": move.card}
