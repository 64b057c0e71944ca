"""Rejected input: inconsistent states, impossible rule options and illegal moves, each
with an error whose `path` names the offending field."""

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.basra import (
    MoveError,
    Rules,
    RulesError,
    State,
    StateError,
    apply,
    legal_moves,
    new_game,
    read_move,
)
from engine.basra.state import REQUIRED
from engine.cards import CardError, parse_card
from engine.errors import GameError
from engine.shapes import CARD_PATTERN
from tests.engine.builders import LEVANTINE, build, cards, rules_with, single_play, state_json

Edit = Callable[[dict[str, Any]], None]


def fresh() -> dict[str, Any]:
    return new_game(LEVANTINE, 2, "bad-input").to_json()


def captured_once() -> dict[str, Any]:
    """Seat 0 has taken one card with another; seat 1 to move."""
    state = single_play(LEVANTINE, ["5H", "9C"], ["5S"])
    after, _ = apply(state, {"card": "5S", "capture": ["5H"]})
    return after.to_json()


def rejected(data: object) -> StateError:
    with pytest.raises(StateError) as raised:
        State.from_json(data)
    assert isinstance(raised.value, GameError)
    return raised.value


def setter(path: str, value: Any) -> Edit:
    """An edit that sets a dotted path (list indexes as numbers) to `value`."""
    *parents, last = path.split(".")

    def edit(data: dict[str, Any]) -> None:
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return edit


def rules_option(name: str, value: Any) -> Edit:
    return setter(f"rules.{name}", value)


@pytest.mark.parametrize("data", [None, [], "state", 3, True])
def test_a_state_must_be_an_object(data: object) -> None:
    assert rejected(data).path == "state"


@pytest.mark.parametrize("key", REQUIRED)
def test_every_required_key(key: str) -> None:
    data = fresh()
    del data[key]
    error = rejected(data)
    assert error.path == key and "required" in error.reason


def test_seed_is_optional() -> None:
    data = fresh()
    del data["seed"]
    assert "seed" not in State.from_json(data).to_json()


def test_an_unknown_key() -> None:
    data = fresh()
    data["colour"] = "red"
    assert rejected(data).path == "colour"


BAD_STATES: dict[str, tuple[Edit, str]] = {
    "game chess": (setter("game", "chess"), "game"),
    "rules not an object": (setter("rules", "levantine"), "rules"),
    "unknown rule option": (rules_option("jokers", True), "rules.jokers"),
    "unknown preset": (rules_option("preset", "jordanian"), "rules.preset"),
    "preset not a string": (rules_option("preset", ["levantine"]), "rules.preset"),
    "bool for int": (rules_option("hand_size", True), "rules.hand_size"),
    "bool for int target": (rules_option("target_score", True), "rules.target_score"),
    "float for int": (rules_option("basra_points", 10.0), "rules.basra_points"),
    "int for bool": (rules_option("forced_capture", 1), "rules.forced_capture"),
    "string for bool": (rules_option("card_points", "true"), "rules.card_points"),
    "hand_size 5": (rules_option("hand_size", 5), "rules.hand_size"),
    "capture_policy greedy": (rules_option("capture_policy", "greedy"), "rules.capture_policy"),
    "seven mode joker": (rules_option("seven_diamonds_mode", "joker"),
                         "rules.seven_diamonds_mode"),
    "table seven": (rules_option("table_seven_diamonds", "wild"), "rules.table_seven_diamonds"),
    "max sum 0": (rules_option("seven_diamonds_basra_max_sum", 0),
                  "rules.seven_diamonds_basra_max_sum"),
    "negative basra": (rules_option("basra_points", -1), "rules.basra_points"),
    "negative jack basra": (rules_option("jack_basra_points", -20), "rules.jack_basra_points"),
    "negative majority": (rules_option("majority_points", -30), "rules.majority_points"),
    "tie policy": (rules_option("tie_policy", "split"), "rules.tie_policy"),
    "target 0": (rules_option("target_score", 0), "rules.target_score"),
    "seats_allowed [3]": (rules_option("seats_allowed", [3]), "rules.seats_allowed"),
    "seats_allowed []": (rules_option("seats_allowed", []), "rules.seats_allowed"),
    "seats_allowed int": (rules_option("seats_allowed", 2), "rules.seats_allowed"),
    "seats 3": (setter("seats", 3), "seats"),
    "seats string": (setter("seats", "2"), "seats"),
    "seats bool": (setter("seats", True), "seats"),
    "malformed hand card": (setter("hands.0.1", "ZZ"), "hands.0.1"),
    "number as card": (setter("hands.1.3", 7), "hands.1.3"),
    "eleven": (setter("table.2", "11H"), "table.2"),
    "malformed stock card": (setter("stock.5", "7X"), "stock.5"),
    "hands not a list": (setter("hands", "AC"), "hands"),
    "hand not a list": (setter("hands.0", "AC"), "hands.0"),
    "three hands": (lambda data: data["hands"].append([]), "hands"),
    "turn out of range": (setter("turn", 2), "turn"),
    "turn negative": (setter("turn", -1), "turn"),
    "turn bool": (setter("turn", False), "turn"),
    "turn string": (setter("turn", "0"), "turn"),
    "turn float": (setter("turn", 0.0), "turn"),
    "turn null while playing": (setter("turn", None), "turn"),
    "dealer out of range": (setter("dealer", 2), "dealer"),
    "dealer bool": (setter("dealer", True), "dealer"),
    "dealer null": (setter("dealer", None), "dealer"),
    "winner while playing": (setter("winner", 0), "winner"),
    "winner out of range": (setter("winner", 2), "winner"),
    "status": (setter("status", "paused"), "status"),
    "seed not a string": (setter("seed", 42), "seed"),
    "negative score": (setter("scores", [-1, 0]), "scores.0"),
    "score bool": (setter("scores", [0, True]), "scores.1"),
    "three scores": (setter("scores", [0, 0, 0]), "scores"),
    "negative carry": (setter("carry", -30), "carry"),
    "carry string": (setter("carry", "30"), "carry"),
    "round 0": (setter("round", 0), "round"),
    "round bool": (setter("round", True), "round"),
    "basras not a list": (setter("basras", {}), "basras"),
    "basras of three sides": (setter("basras", [[], [], []]), "basras"),
    "a side's basras not a list": (setter("basras", [{}, []]), "basras.0"),
    "captured of one side": (setter("captured", [[]]), "captured"),
    "last capturer without captures": (setter("last_capturer", 0), "last_capturer"),
    "last capturer out of range": (setter("last_capturer", 5), "last_capturer"),
}  # fmt: skip


@pytest.mark.parametrize(("edit", "path"), BAD_STATES.values(), ids=BAD_STATES.keys())
def test_an_inconsistent_state_names_its_field(edit: Edit, path: str) -> None:
    data = fresh()
    edit(data)
    assert rejected(data).path == path


def test_seats_4_when_the_rules_allow_only_2() -> None:
    data = new_game(LEVANTINE, 4, "four").to_json()
    data["rules"]["seats_allowed"] = [2]
    assert rejected(data).path == "seats"


def test_a_card_twice() -> None:
    data = fresh()
    data["hands"][0][0] = data["hands"][1][0]
    error = rejected(data)
    assert error.path == "state" and data["hands"][1][0] in error.reason


def test_a_card_missing() -> None:
    data = fresh()
    gone = data["stock"].pop()
    error = rejected(data)
    assert error.path == "state" and gone in error.reason


def test_ten_and_lowercase_inputs_are_read_and_normalised() -> None:
    data = fresh()
    expected = copy.deepcopy(data)
    spelled = {"TD": "10d", "7D": "7d", "TS": "10S", "AH": "ah"}
    for place in (*data["hands"], data["table"], data["stock"]):
        place[:] = [spelled.get(card, card) for card in place]
    assert State.from_json(data).to_json() == expected


def test_a_card_spelled_with_a_letter_that_only_uppercases_to_a_suit() -> None:
    """The long s (U+017F) uppercases to S, but the contract accepts `10` and lower-case
    card letters only: `7\u017f` is not the seven of spades."""
    data = fresh()
    at = next(index for index, card in enumerate(data["stock"]) if card[1] == "S")
    data["stock"][at] = data["stock"][at][0] + "\u017f"
    assert rejected(data).path == f"stock.{at}"


# A rank's text then a suit's, each in an accepted form or one that looks or cases like
# one (the long s, a dotless i, the Kelvin sign, a full-width T), or any short text.
LOOKALIKES = ["", "1", "x", "\u017f", "\u0131", "\u212a", "\uff34"]
RANK_TEXTS = st.sampled_from([*"A23456789TJQKatjqk", "10", "1O", *LOOKALIKES])
SUIT_TEXTS = st.sampled_from([*"CDHScdhs", *LOOKALIKES])
CARD_TEXT = st.one_of(
    st.builds(str.__add__, RANK_TEXTS, SUIT_TEXTS),
    st.text(st.sampled_from("A23456789TJQK10CDHSatjqkcdhs\u017f"), max_size=4),
)


@settings(max_examples=200, deadline=None)
@given(CARD_TEXT)
def test_a_card_is_read_exactly_when_it_has_the_declared_pattern(text: str) -> None:
    """engine/shapes.py CARD_PATTERN declares every form `parse_card` reads (the contract's
    card forms), and the service checks moves against it: the two must agree."""
    try:
        read = bool(parse_card(text))
    except CardError:
        read = False
    assert read == bool(re.fullmatch(CARD_PATTERN, text))


def test_hand_sizes_must_fit_dealer_and_turn() -> None:
    data = fresh()
    data["turn"] = 1  # seat 0 leads the deal and has not played yet
    assert rejected(data).path == "hands"
    data = fresh()
    data["table"].append(data["hands"][0].pop())  # seat 0 laid a card but is still to move
    assert rejected(data).path == "hands"
    data["turn"] = 1
    assert State.from_json(data).turn == 1


def test_a_hand_larger_than_hand_size() -> None:
    all_cards = cards("AC 2C 3C 4C 5C AD 2D 3D 4D 5D")
    data = state_json(LEVANTINE, hands=[all_cards[:5], all_cards[5:]], table=cards("AH 2H 3H 4H"),
                      dealer=1, turn=0, stock_size=32)  # fmt: skip
    error = rejected(data)
    assert (error.path, error.reason) == ("hands.0", "holds 5 cards; a deal gives 4")


def test_six_cards_in_hand_are_fine_with_hand_size_6() -> None:
    all_cards = cards("AC 2C 3C 4C 5C 6C AD 2D 3D 4D 5D 6D")
    data = state_json(rules_with(hand_size=6), hands=[all_cards[:6], all_cards[6:]],
                      table=cards("AH 2H 3H 4H"), dealer=1, turn=0, stock_size=24)  # fmt: skip
    assert len(State.from_json(data).hands[0]) == 6


@pytest.mark.parametrize("moved", [1, 4, 7])
def test_stock_length_not_a_multiple_of_the_deal(moved: int) -> None:
    data = captured_once()
    data["captured"][1].extend(data["stock"][:moved])
    del data["stock"][:moved]
    data["last_capturer"] = 1
    assert rejected(data).path == "stock"


def test_empty_hands_with_a_stock_left() -> None:
    data = captured_once()
    data["captured"][1].extend(data["hands"][1])
    data["hands"][1] = []
    assert rejected(data).path == "hands"


def over(data: dict[str, Any], winner: int = 0, scores: tuple = (130, 90)) -> dict[str, Any]:
    """`data` with every card in the piles and the match decided."""
    for place in (*data["hands"], data["table"], data["stock"]):
        data["captured"][0].extend(place)
        place.clear()
    data.update(status="match_over", turn=None, winner=winner, scores=list(scores))
    data["last_capturer"] = 0
    return data


def test_a_finished_match_is_accepted() -> None:
    state = State.from_json(over(fresh()))
    assert state.status == "match_over" and legal_moves(state) == []


BAD_FINISHES: dict[str, tuple[Edit, str]] = {
    "cards in hand": (lambda data: data["hands"][1].append(data["captured"][0].pop()), "hands"),
    "cards on the table": (lambda data: data["table"].append(data["captured"][0].pop()), "table"),
    "turn set": (setter("turn", 0), "turn"),
    "no winner": (setter("winner", None), "winner"),
    "winner not highest": (setter("winner", 1), "winner"),
    "winner below target": (setter("scores", [100, 90]), "winner"),
    "tie at the top": (setter("scores", [130, 130]), "winner"),
}  # fmt: skip


@pytest.mark.parametrize(("edit", "path"), BAD_FINISHES.values(), ids=BAD_FINISHES.keys())
def test_an_inconsistent_finish_names_its_field(edit: Edit, path: str) -> None:
    data = over(fresh())
    edit(data)
    assert rejected(data).path == path


BAD_BASRAS: dict[str, tuple[object, str]] = {
    "not an object": ("5S", "basras.0.0"),
    "missing points": ({"card": "5S"}, "basras.0.0"),
    "extra key": ({"card": "5S", "points": 10, "seat": 0}, "basras.0.0"),
    "malformed card": ({"card": "5Z", "points": 10}, "basras.0.0.card"),
    "negative points": ({"card": "5S", "points": -10}, "basras.0.0.points"),
    "points as string": ({"card": "5S", "points": "10"}, "basras.0.0.points"),
    "card not in the pile": ({"card": "9C", "points": 10}, "basras.0.0.card"),
}  # fmt: skip


@pytest.mark.parametrize(("record", "path"), BAD_BASRAS.values(), ids=BAD_BASRAS.keys())
def test_a_malformed_basra_record(record: object, path: str) -> None:
    data = captured_once()
    data["basras"][0] = [record]
    assert rejected(data).path == path


def test_a_basra_record_in_the_other_sides_pile() -> None:
    data = captured_once()
    data["basras"][1] = [{"card": "5S", "points": 10}]
    assert rejected(data).path == "basras.1.0.card"


def test_captured_cards_need_a_last_capturer() -> None:
    data = captured_once()
    data["last_capturer"] = None
    assert rejected(data).path == "last_capturer"


def test_a_state_reads_back_what_it_writes() -> None:
    data = captured_once()
    assert State.from_json(copy.deepcopy(data)).to_json() == data


# --- Rules.from_json -------------------------------------------------------------------


BAD_RULES: dict[str, tuple[object, str]] = {
    "not an object": (["levantine"], "rules"),
    "unknown preset": ({"preset": "lebanese"}, "preset"),
    "preset null": ({"preset": None}, "preset"),
    "unknown option": ({"jokers": 2}, "jokers"),
    "bool for int": ({"target_score": False}, "target_score"),
    "int for bool": ({"initial_table_redeal": 0}, "initial_table_redeal"),
    "string for bool": ({"last_card_basra_counts": "false"}, "last_card_basra_counts"),
    "hand_size 8": ({"hand_size": 8}, "hand_size"),
    "hand_size as string": ({"hand_size": "4"}, "hand_size"),
    "seats_allowed with 3": ({"seats_allowed": [2, 3]}, "seats_allowed"),
    "seats_allowed bools": ({"seats_allowed": [True]}, "seats_allowed"),
    "capture_policy": ({"capture_policy": "first_found"}, "capture_policy"),
    "seven_diamonds_mode": ({"seven_diamonds_mode": None}, "seven_diamonds_mode"),
    "tie_policy": ({"tie_policy": ["none"]}, "tie_policy"),
    "max sum negative": ({"seven_diamonds_basra_max_sum": -1}, "seven_diamonds_basra_max_sum"),
}  # fmt: skip


@pytest.mark.parametrize(("data", "path"), BAD_RULES.values(), ids=BAD_RULES.keys())
def test_rules_errors_name_the_option(data: object, path: str) -> None:
    with pytest.raises(RulesError) as raised:
        Rules.from_json(data)
    assert raised.value.path == path


def test_rules_overrides_sit_on_top_of_the_preset() -> None:
    rules = Rules.from_json({"preset": "egyptian", "target_score": 51, "seats_allowed": [4, 2]})
    assert rules.seven_diamonds_mode == "wild" and rules.target_score == 51
    assert rules.seats_allowed == (2, 4)
    assert Rules.from_json({}) == LEVANTINE
    assert Rules.from_json(rules.to_json()) == rules


def test_new_game_checks_the_seats() -> None:
    with pytest.raises(RulesError) as raised:
        new_game(LEVANTINE, 3, "x")
    assert raised.value.path == "seats"
    with pytest.raises(RulesError):
        new_game(rules_with(seats_allowed=[2]), 4, "x")


# --- read_move and apply -----------------------------------------------------------------


def moving(table: str, hand: str) -> State:
    return single_play(LEVANTINE, cards(table), cards(hand))


def move_error(state: State, move: object) -> MoveError:
    before = state.to_json()
    with pytest.raises(MoveError) as raised:
        apply(state, move)
    assert state.to_json() == before
    with pytest.raises(MoveError):
        read_move(state, move)
    return raised.value


def test_a_card_not_in_hand() -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "5D", "capture": ["5H"]})
    assert error.path == "move.card" and "card not in hand" in error.reason


@pytest.mark.parametrize("card", ["5Z", "", None, 5, ["5S"], "55S"])
def test_a_malformed_card(card: object) -> None:
    assert move_error(moving("5H 9C", "5S 2D"), {"card": card}).path == "move.card"


def test_a_missing_card() -> None:
    assert move_error(moving("5H 9C", "5S 2D"), {"capture": ["5H"]}).path == "move.card"


@pytest.mark.parametrize("move", [[], "5S", 5, None])
def test_a_move_must_be_an_object(move: object) -> None:
    assert move_error(moving("5H 9C", "5S 2D"), move).path == "move"


def test_a_capture_that_is_not_legal_lists_the_legal_ones() -> None:
    state = moving("7S 2C 2H", "9D 3C")
    error = move_error(state, {"card": "9D", "capture": ["2C", "2H"]})
    assert error.path == "move.capture"
    assert "2C" in error.reason and "2H" in error.reason and "7S" in error.reason
    assert error.reason.count("7S") == 2


def test_laying_a_card_that_can_capture() -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "5S", "capture": []})
    assert error.path == "move.capture" and "5H" in error.reason
    assert error.choices == [["5H"]]


def test_capturing_with_a_card_that_takes_nothing() -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "2D", "capture": ["5H"]})
    assert error.path == "move.capture"
    assert error.reason == "2D cannot take 5H; it can take nothing"
    assert error.choices == [[]]


def test_an_omitted_capture_with_several_outcomes_lists_them() -> None:
    error = move_error(moving("3C 3D 3H", "6S KC"), {"card": "6S"})
    assert error.path == "move.capture"
    for pair in ("3C", "3D"), ("3C", "3H"), ("3D", "3H"):
        assert all(card in error.reason for card in pair)
    assert error.reason.count("3C") == 2


def test_an_omitted_capture_with_one_outcome_is_accepted() -> None:
    state = moving("5H 9C", "5S 2D")
    after, _ = apply(state, {"card": "5s"})
    assert after.table == ("9C",) and "5H" in after.captured[0]
    after, _ = apply(state, {"card": "2D"})
    assert after.table == ("5H", "9C", "2D")


def test_capture_cards_in_any_order_and_spelling() -> None:
    state = moving("2C 6D 4H TS", "TH 3C")
    move = read_move(state, {"card": "10h", "capture": ["10s", "4h", "6D"]})
    assert move.card == "TH" and move.capture == ("6D", "4H", "TS")


def test_duplicate_cards_in_a_capture() -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "5S", "capture": ["5H", "5H"]})
    assert error.path == "move.capture"


@pytest.mark.parametrize("capture", ["5H", {"5H": True}, 5, True])
def test_a_capture_that_is_not_a_list(capture: object) -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "5S", "capture": capture})
    assert error.path == "move.capture"


def test_a_malformed_capture_card() -> None:
    error = move_error(moving("5H 9C", "5S 2D"), {"card": "5S", "capture": ["5H", "ZZ"]})
    assert error.path == "move.capture.1"


def test_a_move_on_a_finished_match() -> None:
    state = State.from_json(over(fresh()))
    error = move_error(state, {"card": "5S", "capture": []})
    assert error.path == "move"


def test_a_move_on_a_played_out_round() -> None:
    state = build(LEVANTINE, hands=[(), ()], table=["5H"], dealer=1, turn=0)
    assert legal_moves(state) == []
    assert move_error(state, {"card": "5S"}).path == "move"
