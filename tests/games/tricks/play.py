"""Dealing and playing a card; the match is one deal."""

from typing import Any

from engine.cards import canonical, shuffled
from engine.game import Events, replaced

from .cards import DECK, HEIGHT
from .moves import Move, read_move
from .rules import Rules, check_seats
from .scoring import score
from .state import MATCH_OVER, PLAYING, State


def new_game(rules: Rules, seats: int, seed: str) -> State:
    check_seats(seats)
    pack = shuffled(DECK, f"tricks/{seed}")
    hands = tuple(canonical(pack[seat::seats]) for seat in range(seats))
    return State(rules, seats, hands, (), 0, 0, ((),) * seats, PLAYING, seed)


def apply(state: State, move: Move | dict[str, Any]) -> tuple[State, Events]:
    move = read_move(state, move)
    seat = state.turn
    hand = tuple(card for card in state.hands[seat] if card != move.card)
    state = state._replace(hands=replaced(state.hands, seat, hand), trick=(*state.trick, move.card))
    events: Events = [{"type": "play", "seat": seat, "card": move.card}]
    if len(state.trick) < state.seats:
        return state._replace(turn=(seat + 1) % state.seats), events
    led = state.trick[0][1]
    best = max((card for card in state.trick if card[1] == led), key=HEIGHT.__getitem__)
    winner = (state.leader + state.trick.index(best)) % state.seats
    won = replaced(state.won, winner, canonical((*state.won[winner], *state.trick)))
    state = state._replace(trick=(), leader=winner, turn=winner, won=won)
    events.append({"type": "trick", "winner": winner, "card": best})
    if any(state.hands):
        return state, events
    state = state._replace(turn=None, status=MATCH_OVER)
    events.append({"type": "match_end", "scores": [side["total"] for side in score(state)]})
    return state, events


def view(state: State, seat: int | None) -> dict[str, Any]:
    """Its own hand and how many cards the others hold; a spectator sees no hand. `scores`:
    the points banked, which the play page shows (none before the one deal ends)."""
    data = state.to_json()
    del data["hands"]
    data.pop("seed", None)
    data["seat"] = seat
    if seat is not None:
        data["hand"] = list(state.hands[seat])
    data["hand_sizes"] = [len(hand) for hand in state.hands]
    over = state.status == MATCH_OVER
    data["scores"] = [side["total"] if over else 0 for side in score(state)]
    return data
