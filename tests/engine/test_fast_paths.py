"""The speed-ups remember and trust things: each one must answer exactly as the careful
path does, for bad input above all."""

import copy

import pytest

from engine.basra import (
    MoveError,
    Rules,
    RulesError,
    State,
    StateError,
    apply,
    legal_moves,
    new_game,
)
from engine.basra.moves import card_moves, clear_caches, hand_moves, is_final_card, sum_captures
from tests.engine.builders import LEVANTINE, single_play


@pytest.mark.parametrize(
    ("good", "bad", "path"),
    [
        ({"initial_table_redeal": True}, {"initial_table_redeal": 1}, "initial_table_redeal"),
        ({"target_score": 1}, {"target_score": True}, "target_score"),
        ({"seats_allowed": [2]}, {"seats_allowed": [2.0]}, "seats_allowed"),
        ({"seats_allowed": [2]}, {"seats_allowed": [True]}, "seats_allowed"),
        ({"hand_size": 4}, {"hand_size": 4.0}, "hand_size"),
    ],
)
def test_remembered_rules_never_stand_in_for_an_equal_looking_wrong_type(good, bad, path):
    assert Rules.from_json(good) == Rules.from_json(dict(good))  # read twice: remembered
    with pytest.raises(RulesError) as raised:
        Rules.from_json(bad)
    assert raised.value.path == path


def test_rules_with_an_unhashable_value_are_read_and_rejected_without_the_memo():
    with pytest.raises(RulesError) as raised:
        Rules.from_json({"seats_allowed": [[2]]})
    assert raised.value.path == "seats_allowed"


def test_written_rules_are_the_callers_own():
    written = LEVANTINE.to_json()
    written["target_score"] = 5
    written["seats_allowed"].append(3)
    assert LEVANTINE.to_json()["target_score"] == 121
    assert LEVANTINE.to_json()["seats_allowed"] == [2, 4]


def test_cards_in_other_accepted_forms_are_still_read():
    data = new_game(LEVANTINE, 2, "forms").to_json()
    canonical = copy.deepcopy(data)
    data["table"] = [card.lower() for card in data["table"]]
    data["stock"] = [card.replace("T", "10") for card in data["stock"]]
    assert State.from_json(data).to_json() == canonical


@pytest.mark.parametrize("place", ["table", "stock"])
def test_a_bad_card_among_good_ones_is_named_by_its_place(place):
    data = new_game(LEVANTINE, 2, "bad-card").to_json()
    data[place][1] = ["7D"]  # unhashable: the fast check cannot even look it up
    with pytest.raises(StateError) as raised:
        State.from_json(data)
    assert raised.value.path == f"{place}.1"


def test_a_card_twice_is_caught_though_the_pack_count_is_right():
    data = new_game(LEVANTINE, 2, "twice").to_json()
    data["stock"][0] = data["table"][0]
    with pytest.raises(StateError, match="appears more than once"):
        State.from_json(data)


def test_a_move_equal_to_a_listed_one_but_for_its_points_is_not_trusted():
    state = single_play(LEVANTINE, ["5H"], ["5S", "9C"])
    listed = legal_moves(state)
    honest = next(move for move in listed if move.capture)
    forged = honest._replace(basra_points=99)
    assert apply(state, forged) == apply(state, honest)


def test_a_move_listed_for_another_state_is_checked_afresh():
    state = single_play(LEVANTINE, ["5H"], ["5S", "9C"])
    other = single_play(LEVANTINE, ["4H"], ["5S", "9C"])
    lay = next(move for move in legal_moves(other) if move.card == "5S")
    assert lay.capture == ()  # legal there, where the 5S takes nothing
    with pytest.raises(MoveError) as raised:
        apply(state, lay)  # here it must take the 5H
    assert raised.value.path == "move.capture"


def test_the_listing_of_a_hand_is_every_cards_own_listing():
    for number in range(40):
        state = new_game(Rules.from_json({"preset": ("levantine", "egyptian")[number % 2]}), 2,
                         f"hand-{number}")  # fmt: skip
        while state.round == 1:
            final = is_final_card(state)
            hand, table = state.hands[state.turn], state.table
            expected = [m for card in hand for m in card_moves(card, table, state.rules, final)]
            assert hand_moves(hand, table, state.rules, final) == expected
            state, _ = apply(state, legal_moves(state)[number % len(legal_moves(state))])


def test_the_capture_search_does_not_depend_on_what_else_lies_on_the_table():
    clear_caches()
    with_faces = sum_captures(9, ("4C", "KD", "5H", "QS"), "max_cards")
    clear_caches()
    alone = sum_captures(9, ("5H", "4C"), "max_cards")
    assert with_faces == alone == (("4C", "5H"),)


def test_a_cover_takes_whole_exactly_when_it_uses_every_card_of_each_value_it_uses():
    from engine.basra.covers import takes_whole, unit

    table = 2 * unit(2) + unit(3) + 4 * unit(1)  # two 2s, a 3, four aces
    assert takes_whole(2 * unit(2), table)
    assert takes_whole(2 * unit(2) + unit(3) + 4 * unit(1), table)
    assert not takes_whole(unit(2), table)  # one of the two 2s: two ways to pick it
    assert not takes_whole(unit(3) + 3 * unit(1), table)

