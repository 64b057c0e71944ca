"""Basra's fast playout against the rules themselves: the same policy played through
`apply` ends the round with the point difference the playout reported."""

import random

import pytest

from engine.basra import hidden
from engine.basra.moves import is_final_card, legal_moves
from engine.basra.play import apply
from engine.basra.state import side_of
from tests.engine.builders import positions


def replayed_difference(state, move, side: int, rng: random.Random, noise: float) -> int:
    """Play `move`, then the playout policy through `apply` to the round's end; the
    round's total for `side` minus the other side's, from the round_end event."""
    state, events = apply(state, move)
    while not any(event["type"] == "round_end" for event in events):
        hand, final = state.hands[state.turn], is_final_card(state)
        choice = hidden.policy_move(hand, state.table, state.rules, final, rng, noise)
        state, events = apply(state, choice)
    (round_end,) = (event for event in events if event["type"] == "round_end")
    totals = [side_score["total"] for side_score in round_end["sides"]]
    return totals[side] - totals[1 - side]


@pytest.mark.parametrize(("preset", "seats"), [("levantine", 2), ("egyptian", 2), ("levantine", 4)])
def test_playout_difference_is_the_rules_score(preset: str, seats: int) -> None:
    for index, state in enumerate(positions(preset, seats, 12, f"playout/{preset}")):
        side = side_of(state.turn)
        for move in legal_moves(state)[:3]:
            expected = hidden.playout(state, move, side, random.Random(index), 2.0)
            assert replayed_difference(state, move, side, random.Random(index), 2.0) == expected
