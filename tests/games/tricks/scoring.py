"""Points: each trick taken, and a bonus for the last one."""

from typing import Any

from .state import State


def score(state: State) -> list[dict[str, Any]]:
    """Per seat: its tricks and its points as the deal stands."""
    points = state.rules.trick_points
    return [
        {"tricks": len(pile) // state.seats, "total": len(pile) // state.seats * points + bonus}
        for pile, bonus in zip(state.won, last_bonus(state))
    ]


def last_bonus(state: State) -> list[int]:
    bonus = [0] * state.seats
    if state.turn is None:
        bonus[state.leader] = state.rules.last_trick_bonus
    return bonus
