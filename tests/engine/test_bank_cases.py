"""Every worked Bank case B01-B63, played through the game protocol and the wire JSON only.

Each test builds its case's position as a state JSON (tests/engine/bank_builders.py), reads
it with the registered game "bank" and checks exactly what the case states: the complete
legal-move list, the events in order and the fields of the state that results.
"""

import json
from typing import Any

import pytest

from engine.errors import GameError
from engine.game import Game, get_game
from tests.engine.bank_builders import (
    CLASSIC,
    assert_events,
    assert_fresh_deal,
    assert_legal,
    bank_state,
    capture,
    deal_event,
    draw,
    entries,
    first_player,
    lay,
    move_json,
    passed,
    play,
    quad,
    run,
    side,
    sides_of,
    skip,
    trumps_of,
    turn_up,
    went_out,
)


@pytest.fixture(scope="module")
def game() -> Game:
    return get_game("bank")


def position(game: Game, seats: int, **fields: Any) -> Any:
    """The game's state for a case's position (bank_builders.bank_state's fields)."""
    return game.read(bank_state(seats, **fields))


def virtual(card: str) -> dict[str, Any]:
    return {"card": card, "by": None, "virtual": True}


def top(card: str, by: int | None) -> dict[str, Any]:
    return {"card": card, "by": by, "virtual": False}


def rejected(game: Game, state: Any, move: dict[str, Any]) -> GameError:
    """`move` is refused, with an error on the move, and the state is left as it was."""
    before = game.write(state)
    with pytest.raises(GameError) as raised:
        game.read_move(state, move)
    assert raised.value.path.startswith("move"), raised.value.path
    assert game.write(state) == before
    return raised.value


# 1. Beating (§3)


def test_b01_the_jack_ranks_below_the_ten(game):
    state = position(game, 2, bank="TS/P", hands={0: "JS AS 9H KS", 1: "7C 8C 9C JC"})
    assert_legal(game, state, "lay JS", "lay KS")
    rejected(game, state, {"type": "lay", "card": "AS"})


def test_b02_the_ten_does_not_beat_the_jack(game):
    state = position(game, 2, bank="8H/P JD/1", hands={0: "TD 9D JC AC", 1: "6C 7C"})
    assert_legal(game, state, "lay JC", "lay 9D")
    rejected(game, state, {"type": "lay", "card": "TD"})


def test_b03_a_six_beats_its_whole_suit(game):
    state = position(game, 2, bank="9S/P AH/1", hands={0: "6H 6C TH", 1: "7C 9C"})
    assert_legal(game, state, "lay 6H", "lay TH")
    rejected(game, state, {"type": "lay", "card": "6C"})


def test_b03_input_accepts_the_other_forms_of_a_ten(game):
    state = position(game, 2, bank="9S/P AH/1", hands={0: "6H 6C TH", 1: "7C 9C"})
    for form in ("10h", "10H", "th", "Th"):
        assert_events(play(game, state, {"type": "lay", "card": form})[1], lay(0, "TH"))


def test_b03_a_card_of_another_rank_or_not_in_hand_is_refused(game):
    state = position(game, 2, bank="9S/P AH/1", hands={0: "6H 6C TH", 1: "7C 9C"})
    for card in ("5H", "2C", "XX", "7C"):
        rejected(game, state, {"type": "lay", "card": card})


def test_b04_a_plain_six_as_target(game):
    state = position(game, 2, trumps="single H", bank="KS/P 6S/1", hands={0: "7S AS 6D 9H"})
    assert_legal(game, state, "lay 6D", "lay 9H")


def test_b05_a_trump_six_falls_only_to_a_six(game):
    state = position(game, 2, trumps="single H", bank="KS/P 6H/1", hands={0: "6C AS KH"})
    assert_legal(game, state, "lay 6C")


def test_b06_same_rank_across_classes(game):
    state = position(game, 2, trumps="senior_junior", bank="9C/P QS/1", hands={0: "QH AD KS 9S"})
    assert_legal(game, state, "lay QH", "lay 9S")


def test_b07_senior_over_junior_and_an_eight_is_always_playable(game):
    state = position(game, 2, trumps="senior_junior", bank="9C/P KD/1", hands={0: "AD 7S 8H TC"})
    assert_legal(game, state, "lay 7S", "lay 8H")


def test_b08_two_trump_suits_of_one_class(game):
    state = position(game, 2, trumps="double", bank="KC/P 9D/1", hands={0: "AS 9C 7D KH"})
    assert_legal(game, state, "lay 9C", "lay 7D")


def test_b09_a_personal_trump(game):
    state = position(game, 2, trumps="per_player H S", bank="7D/P 9C/1", hands={0: "AH 6S"})
    assert_legal(game, state, "lay AH")


def test_b10_a_personal_trump_the_mirror(game):
    state = position(
        game, 2, trumps="per_player H S", bank="7D/P 9C/0", turn=1,
        hands={0: "7C 8C", 1: "AH 6S"},
    )  # fmt: skip
    assert_legal(game, state, "lay 6S")


def test_b11_own_trump_on_another_seats_trump(game):
    state = position(game, 2, trumps="per_player H S", bank="8D/P TS/1", hands={0: "6H AS JS QH"})
    assert_legal(game, state, "lay 6H", "lay QH", "lay JS")


def test_b12_the_own_trump_suit_still_goes_down(game):
    state = position(game, 2, trumps="per_player H S", bank="8D/P KH/1", hands={0: "AH QH KS"})
    assert_legal(game, state, "lay QH", "lay KS")


# 2. Drawing and passing (§6)


def b13(game: Game, stock: str = "KC") -> Any:
    return position(game, 2, bank="9S/P 6S/1", hands={0: "7C 8D 9H"}, stock=stock)


def test_b13_draw_then_pass(game):
    state = b13(game)
    assert_legal(game, state, "lay 8D", "draw")
    rejected(game, state, {"type": "pass"})
    after, events = play(game, state, "draw")
    assert_events(events, draw(0, "KC", forced=False))
    data = game.write(after)
    assert data["drawn"] is True and data["turn"] == 0 and data["idle"] == 0
    assert sorted(data["hands"][0]) == sorted(["7C", "8D", "9H", "KC"])
    assert data["stock"][0] != "KC" and "KC" not in data["stock"]
    assert_legal(game, after, "lay 8D", "pass")
    rejected(game, after, {"type": "draw"})


def test_b13_events_for_hide_another_seats_drawn_card(game):
    state = b13(game)
    _, events = play(game, state, "draw")
    assert_events(game.events_for(events, 0), draw(0, "KC", forced=False))
    assert_events(game.events_for(events, 1), draw(0, None, forced=False))
    assert_events(game.events_for(events, None), draw(0, None, forced=False))
    assert_events(events, draw(0, "KC", forced=False))


def test_b13_view_hides_the_hands_and_the_stock(game):
    state = b13(game)
    data = game.write(state)
    after, _ = play(game, state, "draw")
    for seat in (0, 1):
        view = game.view(state, seat)
        assert not {"hands", "stock", "seed"} & set(view)
        assert view["seat"] == seat
        assert sorted(view["hand"]) == sorted(data["hands"][seat])
        assert view["hand_sizes"] == [3, 2] and view["stock_size"] == len(data["stock"])
        for key in ("bank", "target", "trumps", "out", "captured", "scores"):
            assert view[key] == data[key]
    seen_by_1 = json.dumps(game.view(after, 1))
    for card in ("7C", "8D", "9H", "KC", data["stock"][1]):
        assert f'"{card}"' not in seen_by_1
    assert game.view(after, 1)["hand_sizes"] == [4, 2]
    spectator = game.view(after, None)
    assert not {"hands", "stock", "seed"} & set(spectator)
    assert '"KC"' not in json.dumps(spectator)


def test_b14_the_drawn_card_beats(game):
    state = b13(game, stock="6H")
    after, events = play(game, state, "draw")
    assert_events(events, draw(0, "6H", forced=False))
    assert_legal(game, after, "lay 6H", "lay 8D")
    rejected(game, after, {"type": "pass"})


def test_b15_empty_stock_pass_at_once(game):
    state = position(game, 2, bank="9S/P 6S/1", hands={0: "7C 9H", 1: "TC JC"}, rest_to=1)
    assert game.write(state)["stock"] == []
    assert_legal(game, state, "pass")
    rejected(game, state, {"type": "draw"})


# 3. Free plays listed (§7)


def test_b16_a_quad_is_listed_once_per_top_card(game):
    state = position(game, 2, bank="8C/P KD/1", hands={0: "9C 9D 9H 9S JC", 1: "7C 6C"})
    assert_legal(
        game, state, "lay 9D", "quad 9D 9H 9S 9C", "quad 9C 9H 9S 9D", "quad 9C 9D 9S 9H",
        "quad 9C 9D 9H 9S",
    )  # fmt: skip


def test_b17_runs_follow_the_game_order(game):
    state = position(game, 2, bank="9S/P 7C/1", hands={0: "JH QH KH TH AH 6C"})
    assert_legal(
        game, state, "lay 6C", "run JH QH KH TH", "run TH KH QH JH", "run QH KH TH AH",
        "run AH TH KH QH",
    )  # fmt: skip
    rejected(game, state, move_json("run KH JH QH TH"))


def test_b17_nine_ten_jack_queen_is_no_run(game):
    state = position(game, 2, bank="9S/P 7C/1", hands={0: "9D TD JD QD 6C"})
    assert_legal(game, state, "lay 6C")
    rejected(game, state, move_json("run 9D TD JD QD"))


# 4. Taking the bank (§8)


def b18(game: Game, **rules: Any) -> Any:
    return position(
        game, 2, trumps="per_player D S", rules=rules, bank="KH/P QH/0 AS/1",
        hands={0: "KC 9H", 1: "6S TD 8C"}, stock="7C 8S",
    )  # fmt: skip


def b18_passed(game: Game, **rules: Any) -> tuple[Any, list[dict]]:
    """B18 played to its pass: seat 0 draws 7C and passes."""
    state, events = play(game, b18(game, **rules), "draw")
    assert_events(events, draw(0, "7C"))
    return play(game, state, "pass")


def test_b18_draw_pass_and_the_layer_takes_the_bank(game):
    state = b18(game)
    assert_legal(game, state, "draw")
    state, _ = play(game, state, "draw")
    assert sorted(game.write(state)["hands"][0]) == sorted(["KC", "9H", "7C"])
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0), capture(1, "KH QH AS", 20, "pass"))
    data = game.write(state)
    assert data["bank"] == [] and data["target"] == virtual("AS")
    assert data["turn"] == 1 and data["idle"] == 1 and data["drawn"] is False
    assert sorted(data["captured"][1]) == sorted(["KH", "QH", "AS"])
    assert data["captured"][0] == []
    for seat in (0, 1, None):
        assert game.events_for(events, seat) == events


def test_b19_answering_a_virtual_target(game):
    state, _ = b18_passed(game)
    assert_legal(game, state, "lay 6S", "lay 8C")
    state, events = play(game, state, "lay 6S")
    assert_events(events, lay(1, "6S"))
    data = game.write(state)
    assert data["bank"] == entries("6S/1") and data["target"] == top("6S", 1)
    assert data["turn"] == 0 and data["idle"] == 0


def test_b20_a_one_card_bank_is_not_taken(game):
    state, _ = b18_passed(game)
    state, _ = play(game, state, "lay 6S")
    assert_legal(game, state, "draw")
    state, events = play(game, state, "draw")
    assert_events(events, draw(0, "8S"))
    assert_legal(game, state, "lay 8S", "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0))
    data = game.write(state)
    assert data["bank"] == entries("6S/1") and data["target"] == top("6S", 1)
    assert data["turn"] == 1 and data["idle"] == 1 and data["drawn"] is False
    assert_legal(game, state, "lay 8C", "draw")


def b21(game: Game, **rules: Any) -> Any:
    return position(
        game, 2, rules=rules, bank="KS/P QS/1", hands={0: "AD 7H", 1: "TC 9D"}, rest_to=0
    )


def test_b21_the_pack_card_plus_one_card_is_taken(game):
    state = b21(game)
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0), capture(1, "KS QS", 8, "pass"))
    data = game.write(state)
    assert data["bank"] == [] and data["target"] == virtual("QS")
    assert data["turn"] == 1 and data["idle"] == 1
    assert data["status"] == "playing" and data["deal"] == 1
    assert data["captured"][1] == ["QS", "KS"]  # canonical order


def test_b22_the_pack_card_alone_is_never_taken(game):
    state = position(
        game, 3, bank="KS/P", turn=1, drawn=True, hands={0: "7C", 1: "AD 7H 9C", 2: "JC"},
        stock="6D",
    )  # fmt: skip
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(1))
    data = game.write(state)
    assert data["bank"] == entries("KS/P") and data["target"] == top("KS", None)
    assert data["turn"] == 2 and data["idle"] == 1 and data["drawn"] is False
    assert data["captured"] == [[], [], []]


def test_b23_a_one_card_bank_goes_round_to_its_owner(game):
    state = position(game, 3, bank="AH/2", hands={0: "KC 9D", 1: "QC 7S", 2: "TH 6D"}, rest_to=0)
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0))
    data = game.write(state)
    assert data["turn"] == 1 and data["idle"] == 1
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(1))
    data = game.write(state)
    assert data["turn"] == 2 and data["idle"] == 2 and data["status"] == "playing"
    assert data["bank"] == entries("AH/2")
    assert_legal(game, state, "lay TH")


def test_b24_a_seat_that_is_out_still_takes_the_bank(game):
    state = position(
        game, 3, out=[(2, "plain")], bank="AC/P KC/0 6C/2", hands={0: "QD 9H", 1: "JS"},
        rest_to=1,
    )  # fmt: skip
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0), capture(2, "AC KC 6C", 17, "pass"))
    data = game.write(state)
    assert data["bank"] == [] and data["target"] == virtual("6C")
    assert data["turn"] == 1 and data["idle"] == 1 and data["status"] == "playing"
    assert sorted(data["captured"][2]) == sorted(["AC", "KC", "6C"])


def test_b25_an_out_seat_after_a_draw_with_four_seats(game):
    state = position(
        game, 4, out=[(1, "plain")], bank="7H/P TH/1", turn=2,
        hands={0: "8H 7S", 2: "AD 9S", 3: "JC"}, stock="QC",
    )  # fmt: skip
    assert_legal(game, state, "draw")
    state, events = play(game, state, "draw")
    assert_events(events, draw(2, "QC"))
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(2), capture(1, "7H TH", 10, "pass"))
    data = game.write(state)
    assert data["turn"] == 3 and data["idle"] == 1 and data["target"] == virtual("TH")


# 5. Eights, quads and runs (§7)


def test_b26_eight_follow_up_draw_then_pass(game):
    state = position(game, 2, bank="9H/P QH/1", hands={0: "8S JH KD", 1: "AC TC"}, stock="JC")
    assert_legal(game, state, "lay JH", "lay 8S")
    state, events = play(game, state, "lay 8S")
    assert_events(events, lay(0, "8S"))
    data = game.write(state)
    assert data["target"] == top("8S", 0) and data["turn"] == 0 and data["drawn"] is False
    assert_legal(game, state, "draw")
    state, events = play(game, state, "draw")
    assert_events(events, draw(0, "JC"))
    assert_legal(game, state, "pass")
    rejected(game, state, {"type": "draw"})
    state, events = play(game, state, "pass")
    assert_events(events, passed(0))
    data = game.write(state)
    assert data["bank"] == entries("9H/P QH/1 8S/0") and data["target"] == top("8S", 0)
    assert data["turn"] == 1 and data["idle"] == 1 and data["captured"] == [[], []]


def test_b27_eight_follow_up_with_a_seven(game):
    state = position(game, 2, bank="9C/P QC/1", hands={0: "8C 7C 9D", 1: "AH TH"})
    state, events = play(game, state, "lay 8C")
    assert_events(events, lay(0, "8C"))
    assert_legal(game, state, "lay 7C")
    state, events = play(game, state, "lay 7C")
    assert_events(events, lay(0, "7C"), skip(1))
    data = game.write(state)
    assert data["turn"] == 0 and data["target"] == top("7C", 0) and data["drawn"] is False
    assert_legal(game, state, "draw")


def test_b28_going_out_on_an_eight(game):
    state = position(game, 3, bank="9C/P QC/1", hands={0: "8H"})
    state, events = play(game, state, "lay 8H")
    assert_events(events, lay(0, "8H"), went_out(0, 1, "plain", 20))
    data = game.write(state)
    assert data["turn"] == 1 and data["target"] == top("8H", 0) and data["hands"][0] == []
    assert data["out"] == [{"seat": 0, "place": 1, "finish": "plain", "bonus": 20}]
    assert data["status"] == "playing"


def b29(game: Game) -> Any:
    return position(game, 2, bank="KD/P JD/1", hands={0: "QC QD QH QS 9D 6C", 1: "7H 8H"})


def test_b29_a_quad_its_follow_up_and_any_input_order(game):
    state = b29(game)
    assert_legal(
        game, state, "lay 9D", "quad QD QH QS QC", "quad QC QH QS QD", "quad QC QD QS QH",
        "quad QC QD QH QS",
    )  # fmt: skip
    state, events = play(game, state, "quad QS QC QH QD")
    assert_events(events, quad(0, "QS QC QH QD"))
    data = game.write(state)
    assert data["bank"] == entries("KD/P JD/1 QS/0 QC/0 QH/0 QD/0")
    assert data["target"] == top("QD", 0) and data["turn"] == 0 and data["drawn"] is False
    assert_legal(game, state, "lay 9D")
    state, events = play(game, state, "lay 9D")
    assert_events(events, lay(0, "9D"))
    assert game.write(state)["turn"] == 1


def test_b29_a_quad_with_a_card_not_in_hand_or_twice_is_refused(game):
    state = b29(game)
    rejected(game, state, move_json("quad QC QD QH 9D"))
    rejected(game, state, move_json("quad QC QD QH QH"))
    rejected(game, state, move_json("quad QC QD QH"))


def test_b30_four_kings_mid_hand_take_nothing(game):
    state = position(game, 2, bank="9C/P 7D/1", hands={0: "KC KD KH KS QS"})
    state, events = play(game, state, "quad KC KD KH KS")
    assert_events(events, quad(0, "KC KD KH KS"))
    data = game.write(state)
    assert data["bank"] == entries("9C/P 7D/1 KC/0 KD/0 KH/0 KS/0")
    assert data["captured"] == [[], []] and data["out"] == [] and data["turn"] == 0
    assert_legal(game, state, "lay QS")


def b31(game: Game) -> Any:
    return position(game, 3, bank="9C/P AS/1", hands={0: "6D 7D 8D 9D AC"})


def test_b31_a_run_is_free_and_ends_the_turn(game):
    state = b31(game)
    assert_legal(game, state, "lay AC", "lay 8D", "run 6D 7D 8D 9D", "run 9D 8D 7D 6D")
    after, events = play(game, state, "run 9D 8D 7D 6D")
    assert_events(events, run(0, "9D 8D 7D 6D"))
    data = game.write(after)
    assert data["bank"] == entries("9C/P AS/1 9D/0 8D/0 7D/0 6D/0")
    assert data["target"] == top("6D", 0) and data["turn"] == 1 and data["drawn"] is False
    assert data["hands"][0] == ["AC"]
    after, events = play(game, state, "run 6D 7D 8D 9D")
    assert_events(events, run(0, "6D 7D 8D 9D"))
    data = game.write(after)
    assert data["target"] == top("9D", 0) and data["turn"] == 1
    rejected(game, state, move_json("run 7D 6D 8D 9D"))


def test_b32_a_run_topped_by_a_seven(game):
    state = position(game, 3, bank="9C/P AS/1", hands={0: "JH 9H 8H 7H KC"})
    state, events = play(game, state, "run JH 9H 8H 7H")
    assert_events(events, run(0, "JH 9H 8H 7H"), skip(1))
    data = game.write(state)
    assert data["turn"] == 2 and data["target"] == top("7H", 0)


# 6. Sevens (§9)


def sevens(game: Game, after_seven: str, **fields: Any) -> Any:
    """The position of B33-B37 under `after_seven`."""
    hands = {0: "7C KD", 1: "AD KH", 2: "QS JS"}
    fields = {"stock": "TC", **fields}
    return position(game, 3, rules={"after_seven": after_seven}, bank="9C/P", hands=hands,
                    **fields)  # fmt: skip


def test_b33_skip(game):
    state, events = play(game, sevens(game, "skip"), "lay 7C")
    assert_events(events, lay(0, "7C"), skip(1))
    data = game.write(state)
    assert data["turn"] == 2 and data["drawn"] is False and data["idle"] == 0
    assert data["hands"][1] == ["AD", "KH"] and data["stock"][0] == "TC"


def test_b34_draw_then_play(game):
    state, events = play(game, sevens(game, "draw_then_play"), "lay 7C")
    assert_events(events, lay(0, "7C"), draw(1, "TC", forced=True))
    data = game.write(state)
    assert data["turn"] == 1 and data["drawn"] is True and data["idle"] == 0
    assert sorted(data["hands"][1]) == sorted(["AD", "KH", "TC"])
    assert_legal(game, state, "pass")
    assert_events(game.events_for(events, 0), lay(0, "7C"), draw(1, None, forced=True))
    assert_events(game.events_for(events, 1), lay(0, "7C"), draw(1, "TC", forced=True))


def test_b35_skip_and_draw(game):
    state, events = play(game, sevens(game, "skip_and_draw"), "lay 7C")
    assert_events(events, lay(0, "7C"), draw(1, "TC", forced=True), skip(1))
    data = game.write(state)
    assert data["turn"] == 2 and data["drawn"] is False
    assert sorted(data["hands"][1]) == sorted(["AD", "KH", "TC"])


def test_b36_none(game):
    state, events = play(game, sevens(game, "none"), "lay 7C")
    assert_events(events, lay(0, "7C"))
    data = game.write(state)
    assert data["turn"] == 1 and data["drawn"] is False
    assert_legal(game, state, "draw")


def test_b37_draw_then_play_on_an_empty_stock(game):
    state = sevens(game, "draw_then_play", stock="", rest_to=2)
    state, events = play(game, state, "lay 7C")
    assert_events(events, lay(0, "7C"))
    data = game.write(state)
    assert data["turn"] == 1 and data["drawn"] is False and data["hands"][1] == ["AD", "KH"]
    assert_legal(game, state, "pass")


def test_b38_two_seats_the_seven_comes_back(game):
    state = position(
        game, 2, rules={"after_seven": "skip_and_draw"}, bank="9S/P",
        hands={0: "7S KD", 1: "AC"}, stock="6D", rest_to=1,
    )  # fmt: skip
    state, events = play(game, state, "lay 7S")
    assert_events(events, lay(0, "7S"), draw(1, "6D", forced=True), skip(1))
    data = game.write(state)
    assert data["turn"] == 0 and data["stock"] == [] and data["idle"] == 0
    assert sorted(data["hands"][1]) == sorted(["AC", "6D"])
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    assert_events(events, passed(0))
    data = game.write(state)
    assert data["turn"] == 1 and data["idle"] == 1
    assert data["bank"] == entries("9S/P 7S/0") and data["captured"][0] == []


# 7. After a capture (§8.3)


def test_b39_free_lead(game):
    state, events = b18_passed(game, after_capture="free_lead")
    assert_events(events, passed(0), capture(1, "KH QH AS", 20, "pass"))
    data = game.write(state)
    assert data["bank"] == [] and data["target"] is None
    assert data["idle"] == 0 and data["turn"] == 1
    assert_legal(game, state, "lay TD", "lay 6S", "lay 8C")


def test_b40_turn_up(game):
    state, events = b18_passed(game, after_capture="turn_up")
    assert_events(events, passed(0), capture(1, "KH QH AS", 20, "pass"), turn_up("8S"))
    data = game.write(state)
    assert data["bank"] == entries("8S/P") and data["target"] == top("8S", None)
    assert data["idle"] == 0 and data["turn"] == 1 and "8S" not in data["stock"]
    assert_legal(game, state, "lay 6S", "lay 8C")


def test_b41_turn_up_with_an_empty_stock(game):
    state, events = play(game, b21(game, after_capture="turn_up"), "pass")
    assert_events(events, passed(0), capture(1, "KS QS", 8, "pass"))
    data = game.write(state)
    assert data["bank"] == [] and data["target"] == virtual("QS")
    assert data["turn"] == 1 and data["idle"] == 1


# 8. Going out (§10)


def test_b42_a_king_finish(game):
    state = position(game, 3, trumps="per_player H S C", bank="9D/P TS/1", hands={0: "KS"})
    state, events = play(game, state, "lay KS")
    assert_events(events, lay(0, "KS"), went_out(0, 1, "king", 30))
    data = game.write(state)
    assert data["bank"] == entries("9D/P TS/1 KS/0") and data["target"] == top("KS", 0)
    assert data["turn"] == 1 and data["captured"] == [[], [], []]


def test_b43_a_trump_king_finish_takes_the_bank(game):
    state = position(game, 3, trumps="per_player H S C", bank="QD/P 9C/1", hands={0: "KH"})
    state, events = play(game, state, "lay KH")
    assert_events(
        events, lay(0, "KH"), went_out(0, 1, "trump_king", 30),
        capture(0, "QD 9C KH", 8, "trump_king"),
    )  # fmt: skip
    data = game.write(state)
    assert data["bank"] == [] and data["target"] == virtual("KH") and data["turn"] == 1
    assert sorted(data["captured"][0]) == sorted(["QD", "9C", "KH"])
    assert data["out"] == [{"seat": 0, "place": 1, "finish": "trump_king", "bonus": 30}]


def test_b44_a_common_trump_king(game):
    state = position(game, 3, trumps="single S", bank="AD/P 9D/0", turn=1, hands={1: "KS"})
    state, events = play(game, state, "lay KS")
    assert_events(
        events, lay(1, "KS"), went_out(1, 1, "trump_king", 30),
        capture(1, "AD 9D KS", 17, "trump_king"),
    )  # fmt: skip
    data = game.write(state)
    assert data["turn"] == 2 and data["target"] == virtual("KS") and data["bank"] == []
    assert sorted(data["captured"][1]) == sorted(["AD", "9D", "KS"])


def test_b45_no_trump_king_without_trumps(game):
    state = position(game, 3, bank="AS/P TS/0", turn=1, hands={1: "KS"})
    state, events = play(game, state, "lay KS")
    assert_events(events, lay(1, "KS"), went_out(1, 1, "king", 30))
    data = game.write(state)
    assert data["turn"] == 2 and data["bank"] == entries("AS/P TS/0 KS/1")
    assert data["captured"] == [[], [], []]


def test_b46_a_run_finish_in_second_place(game):
    state = position(game, 4, out=[(3, "plain")], bank="9C/P AS/1", hands={0: "6D 7D 8D 9D"})
    state, events = play(game, state, "run 6D 7D 8D 9D")
    assert_events(events, run(0, "6D 7D 8D 9D"), went_out(0, 2, "run", 25))
    data = game.write(state)
    assert data["turn"] == 1 and data["target"] == top("9D", 0)
    assert data["out"] == [
        {"seat": 3, "place": 1, "finish": "plain", "bonus": 20},
        {"seat": 0, "place": 2, "finish": "run", "bonus": 25},
    ]


def test_b47_a_quad_finish_in_second_place(game):
    state = position(
        game, 4, out=[(3, "king")], bank="8C/P TC/1", turn=2,
        hands={0: "KH 7S", 1: "QH", 2: "9C 9D 9H 9S"},
    )  # fmt: skip
    state, events = play(game, state, "quad 9C 9D 9S 9H")
    assert_events(events, quad(2, "9C 9D 9S 9H"), went_out(2, 2, "quad", 75))
    data = game.write(state)
    assert data["turn"] == 0 and data["status"] == "playing" and data["drawn"] is False
    assert [bool(hand) for hand in data["hands"]] == [True, True, False, False]
    assert data["out"][1] == {"seat": 2, "place": 2, "finish": "quad", "bonus": 75}


def test_b48_a_four_kings_finish(game):
    state = position(
        game, 3, trumps="senior_junior", bank="AH/P QH/0", turn=1, hands={1: "KC KD KH KS"}
    )
    state, events = play(game, state, "quad KC KH KS KD")
    assert_events(
        events, quad(1, "KC KH KS KD"), went_out(1, 1, "four_kings", 30),
        capture(1, "AH QH KC KH KS KD", 35, "four_kings"),
    )  # fmt: skip
    data = game.write(state)
    assert data["target"] == virtual("KD") and data["turn"] == 2 and data["bank"] == []
    assert sorted(data["captured"][1]) == sorted(["AH", "QH", "KC", "KH", "KS", "KD"])
    assert data["out"] == [{"seat": 1, "place": 1, "finish": "four_kings", "bonus": 30}]


def test_b49_the_junior_trump_king(game):
    state = position(game, 3, trumps="senior_junior", bank="TH/P JH/2", hands={0: "KD"})
    state, events = play(game, state, "lay KD")
    assert_events(
        events, lay(0, "KD"), went_out(0, 1, "trump_king", 30),
        capture(0, "TH JH KD", 16, "trump_king"),
    )  # fmt: skip
    data = game.write(state)
    assert data["target"] == virtual("KD") and data["turn"] == 1
    assert sorted(data["captured"][0]) == sorted(["TH", "JH", "KD"])


# 9. End of a deal and scoring (§11-§13)

B50_TRUMPS = trumps_of("per_player H S", 2)[1]


def b50(
    game: Game,
    *,
    scores: tuple[int, int] = (0, 0),
    deal: int = 1,
    seed: str | None = "bank-cases",
    **rules: Any,
) -> Any:
    """B50's position: seat 0 goes out with its last card, 9C, and ends the deal."""
    return position(
        game, 2, trumps="per_player H S", rules=rules, dealer=0, starter=1, deal=deal,
        bank="JD/P QC/1", hands={0: "9C", 1: "AS TD 7H"}, captured={0: "AC KC", 1: "QS JS"},
        scores=scores, seed=seed,
    )  # fmt: skip


def b50_deal_end(penalty: int, scores: list[int], deal: int = 1) -> dict[str, Any]:
    return {
        "type": "deal_end", "deal": deal, "ending": "E1", "loser": 1, "penalty": penalty,
        "discarded": ["JD", "QC", "9C"],
        "sides": [side(17, "plain", 1, 20), side(4, penalty=penalty)], "scores": scores,
    }  # fmt: skip


def test_b50_e1_the_losers_penalty_and_the_next_deal(game):
    state, events = play(game, b50(game), "lay 9C")
    data = game.write(state)
    assert_events(
        events, lay(0, "9C"), went_out(0, 1, "plain", 20), b50_deal_end(22, [37, -18]),
        deal_event(data),
    )  # fmt: skip
    assert_fresh_deal(data, deal=2, dealer=1, trumps=B50_TRUMPS, scores=[37, -18])
    assert data["tiebreak"] is None


def test_b50_a_state_without_a_seed_deals_the_next_deal_from_itself(game):
    state = b50(game, seed=None)
    first, _ = play(game, state, "lay 9C")
    again, _ = play(game, b50(game, seed=None), "lay 9C")
    assert game.write(first) == game.write(again)
    assert_fresh_deal(game.write(first), deal=2, dealer=1, trumps=B50_TRUMPS, scores=[37, -18])


@pytest.mark.parametrize(
    ("rules", "penalty"),
    [
        ({"hand_penalty": False}, 0),
        ({"penalty_mode": "hand_points"}, 22),
        ({"penalty_mode": "fixed"}, 31),
        ({"penalty_mode": "fixed", "fixed_penalty": 56}, 56),
        ({"penalty_mode": "per_card"}, 9),
        ({"penalty_mode": "per_card", "per_card_penalty": 6}, 18),
        ({"hand_penalty": False, "penalty_mode": "fixed", "fixed_penalty": 56}, 0),
        ({"hand_penalty": False, "penalty_mode": "per_card", "per_card_penalty": 6}, 0),
    ],
)
def test_b51_every_penalty_mode_on_b50(game, rules, penalty):
    state, events = play(game, b50(game, **rules), "lay 9C")
    ending = next(event for event in events if event["type"] == "deal_end")
    assert_events([ending], b50_deal_end(penalty, [37, 4 - penalty]))
    assert game.write(state)["scores"] == [37, 4 - penalty]


def b52(game: Game, scores=(0, 0, 0), **rules: Any) -> Any:
    return position(
        game, 3, rules=rules, dealer=2, starter=1, turn=1, bank="", target="JS", idle=2,
        hands={0: "TC QC", 1: "AD 7H", 2: "TD 6C QH"}, captured={0: "AC KC", 1: "9S JS"},
        rest_to=2, scores=scores,
    )  # fmt: skip


def test_b52_e2_and_the_loser_by_hand_points(game):
    state = b52(game)
    data = game.write(state)
    assert data["stock"] == [] and len(data["captured"][2]) == 36 - 11
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    data = game.write(state)
    ending = {
        "type": "deal_end", "deal": 1, "ending": "E2", "loser": 0, "penalty": 13,
        "discarded": [], "sides": [side(17, penalty=13), side(1), side(68)],
        "scores": [4, 1, 68],
    }  # fmt: skip
    assert_events(events, passed(1), ending, deal_event(data))
    assert_fresh_deal(data, deal=2, dealer=0, trumps=trumps_of("none", 3)[1], scores=[4, 1, 68])


def test_b53_a_capture_on_the_blocking_pass(game):
    state = position(
        game, 2, dealer=1, turn=1, idle=1, bank="9H/P QH/1 8S/0",
        hands={0: "KD AD", 1: "TC"}, captured={0: "AH"}, rest_to=1,
    )  # fmt: skip
    assert_legal(game, state, "pass")
    state, events = play(game, state, "pass")
    data = game.write(state)
    ending = {
        "type": "deal_end", "deal": 1, "ending": "E2", "loser": 0, "penalty": 17,
        "discarded": [], "sides": [side(15, penalty=17, total=-2), side(82)],
        "scores": [-2, 82],
    }  # fmt: skip
    assert_events(events, passed(1), capture(0, "9H QH 8S", 3, "pass"), ending, deal_event(data))
    assert_fresh_deal(data, deal=2, dealer=0, trumps=trumps_of("none", 2)[1], scores=[-2, 82])


@pytest.mark.parametrize(
    ("dealer_rule", "dealer"),
    [("loser", 0), ("finisher", 0), ("starter", 1), ("max_points", 1), ("min_points", 0)],
)
def test_b54_the_next_dealer_every_rule(game, dealer_rule, dealer):
    state = b52(game, scores=(100, 104, 37), dealer_rule=dealer_rule)
    state, events = play(game, state, "pass")
    data = game.write(state)
    assert events[-1] == {**events[-1], **deal_event(data)}
    assert_fresh_deal(
        data, deal=2, dealer=dealer, trumps=trumps_of("none", 3)[1], scores=[104, 105, 105]
    )


def test_b54_finisher_on_b50_is_the_seat_out(game):
    state, _ = play(game, b50(game, dealer_rule="finisher"), "lay 9C")
    assert_fresh_deal(game.write(state), deal=2, dealer=0, trumps=B50_TRUMPS, scores=[37, -18])


# 10. End of the match (§14)


def test_b55_the_target_is_reached(game):
    state, events = play(game, b50(game, scores=(220, 100)), "lay 9C")
    assert_events(
        events, lay(0, "9C"), went_out(0, 1, "plain", 20), b50_deal_end(22, [257, 82]),
        {"type": "match_end", "winner": 0, "winners": [0], "scores": [257, 82]},
    )  # fmt: skip
    data = game.write(state)
    assert data["status"] == "match_over" and data["turn"] is None and data["drawn"] is False
    assert data["winner"] == 0 and data["winners"] == [0] and data["tiebreak"] is None
    assert data["scores"] == [257, 82] and data["deal"] == 1
    assert sorted(data["hands"][1]) == sorted(["AS", "TD", "7H"]) and data["hands"][0] == []
    assert data["bank"] == entries("JD/P QC/1 9C/0")
    assert data["out"] == [{"seat": 0, "place": 1, "finish": "plain", "bonus": 20}]
    assert sides_of(game.score(state)) == [side(17, "plain", 1, 20), side(4, penalty=22)]
    assert game.legal_moves(state) == []
    rejected(game, state, {"type": "pass"})
    rejected(game, state, {"type": "lay", "card": "AS"})


def test_b56_a_tie_at_the_top_starts_a_tie_break(game):
    state, events = play(game, b50(game, scores=(215, 270)), "lay 9C")
    data = game.write(state)
    assert_events(
        events, lay(0, "9C"), went_out(0, 1, "plain", 20), b50_deal_end(22, [252, 252]),
        deal_event(data),
    )  # fmt: skip
    assert data["tiebreak"] == {"eligible": [0, 1], "extra_deals": 0}
    assert_fresh_deal(data, deal=2, dealer=1, trumps=B50_TRUMPS, scores=[252, 252])


def b57(game: Game, eligible: list[int], extra_deals: int, scores: tuple[int, int, int]) -> Any:
    """The position B57-B59 share."""
    return position(
        game, 3, deal=9, dealer=2, out=[(1, "plain")], bank="TC/P 9C/2",
        hands={0: "6C", 2: "AH"}, captured={0: "KS", 1: "QS"},
        tiebreak=(eligible, extra_deals), scores=scores,
    )  # fmt: skip


def b57_deal_end(scores: list[int]) -> dict[str, Any]:
    return {
        "type": "deal_end", "deal": 9, "ending": "E1", "loser": 2, "penalty": 12,
        "discarded": ["TC", "9C", "6C"],
        "sides": [side(5, "plain", 2, 10), side(3, "plain", 1, 20), side(0, penalty=12)],
        "scores": scores,
    }  # fmt: skip


def test_b57_an_eligible_seat_wins_the_tie_break(game):
    state, events = play(game, b57(game, [0, 2], 0, (250, 250, 250)), "lay 6C")
    assert_events(
        events, lay(0, "6C"), went_out(0, 2, "plain", 10), b57_deal_end([265, 273, 238]),
        {"type": "match_end", "winner": 0, "winners": [0], "scores": [265, 273, 238]},
    )  # fmt: skip
    data = game.write(state)
    assert data["status"] == "match_over" and data["turn"] is None
    assert data["winner"] == 0 and data["winners"] == [0]
    assert data["tiebreak"] == {"eligible": [0, 2], "extra_deals": 1}
    assert game.legal_moves(state) == []


def test_b58_the_tie_break_narrows_and_goes_on(game):
    state, events = play(game, b57(game, [0, 1, 2], 1, (260, 252, 250)), "lay 6C")
    data = game.write(state)
    assert_events(
        events, lay(0, "6C"), went_out(0, 2, "plain", 10), b57_deal_end([275, 275, 238]),
        deal_event(data),
    )  # fmt: skip
    assert data["tiebreak"] == {"eligible": [0, 1], "extra_deals": 2}
    trumps = trumps_of("none", 3)[1]
    assert_fresh_deal(data, deal=10, dealer=2, trumps=trumps, scores=[275, 275, 238])


def test_b58_all_three_tie_and_stay_eligible(game):
    state, _ = play(game, b57(game, [0, 1, 2], 1, (250, 242, 277)), "lay 6C")
    data = game.write(state)
    assert data["scores"] == [265, 265, 265] and data["status"] == "playing"
    assert data["tiebreak"] == {"eligible": [0, 1, 2], "extra_deals": 2}
    assert data["deal"] == 10


def test_b59_shared_after_five_extra_deals(game):
    state, events = play(game, b57(game, [0, 1], 4, (260, 252, 250)), "lay 6C")
    assert_events(
        events, lay(0, "6C"), went_out(0, 2, "plain", 10), b57_deal_end([275, 275, 238]),
        {"type": "match_end", "winner": None, "winners": [0, 1], "scores": [275, 275, 238]},
    )  # fmt: skip
    data = game.write(state)
    assert data["status"] == "match_over" and data["turn"] is None
    assert data["winner"] is None and data["winners"] == [0, 1]
    assert data["tiebreak"] == {"eligible": [0, 1], "extra_deals": 5}


@pytest.mark.parametrize(
    ("before", "after", "winners"),
    [((100, 120), [137, 102], [0]), ((100, 155), [137, 137], [0, 1])],
)
def test_b60_the_deal_cap(game, before, after, winners):
    state, events = play(game, b50(game, scores=before, deal=200), "lay 9C")
    winner = winners[0] if len(winners) == 1 else None
    assert_events(
        events, lay(0, "9C"), went_out(0, 1, "plain", 20), b50_deal_end(22, after, deal=200),
        {"type": "match_end", "winner": winner, "winners": winners, "scores": after},
    )  # fmt: skip
    data = game.write(state)
    assert data["status"] == "match_over" and data["turn"] is None and data["deal"] == 200
    assert data["winner"] == winner and data["winners"] == winners
    assert data["tiebreak"] is None


def test_b60_deal_199_goes_on(game):
    state, events = play(game, b50(game, scores=(100, 120), deal=199), "lay 9C")
    data = game.write(state)
    assert events[-1] == {**events[-1], **deal_event(data)}
    assert_fresh_deal(data, deal=200, dealer=1, trumps=B50_TRUMPS, scores=[137, 102])


# 11. The deal (§4)

B61_HANDS = [["JD", "7H", "KS", "AC"], ["TH", "9C", "6S", "QS"], ["9D", "AH", "7C", "8S"]]


@pytest.mark.parametrize(
    ("hands", "pack", "dealer", "first"),
    [
        (B61_HANDS, "QD", 1, 2),
        (B61_HANDS, "6H", 1, 2),
        (B61_HANDS, "6H", 2, 0),
        (B61_HANDS, "AS", 0, 1),
        (B61_HANDS, "KC", 2, 1),
        ([["7H", "KS"], ["TH", "6S"], ["AH", "8S"]], "TD", 1, 2),
    ],
)
def test_b61_the_first_player_rule_these_tests_check_deals_against(hands, pack, dealer, first):
    assert first_player(hands, pack, dealer) == first


def test_b61_every_deal_starts_with_the_first_player(game):
    """Deals are the engine's own shuffle, so the rule is checked on many of them, and each
    of §4.3's three steps must have decided at least one."""
    steps = set()
    for seats in (2, 3, 4):
        for number in range(80):
            data = game.write(game.new({"preset": "classic"}, seats, f"b61-{number}"))
            pack, dealer = data["bank"][0]["card"], data["dealer"]
            assert data["starter"] == first_player(data["hands"], pack, dealer), data
            assert data["turn"] == data["starter"]
            held = [c for hand in data["hands"] for c in hand if c[1] == pack[1]]
            rank = "6789JQKTA".index
            lower = any(rank(c[0]) < rank(pack[0]) for c in held)
            steps.add("lower" if lower else "higher" if held else "dealer's left")
    assert steps == {"lower", "higher", "dealer's left"}


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_b62_a_new_match(game, seats):
    data = game.write(game.new({"preset": "classic"}, seats, "b62"))
    assert data["game"] == "bank" and data["seats"] == seats
    assert {key: data["rules"][key] for key in CLASSIC} == CLASSIC
    assert data["rules"]["preset"] == "classic"
    assert 0 <= data["dealer"] < seats
    personal = data["trumps"]["personal"]
    assert len(personal) == seats and len(set(personal)) == seats
    assert set(personal) <= set("CDHS")
    assert data["trumps"]["common"] == {"C": 0, "D": 0, "H": 0, "S": 0}
    assert_fresh_deal(data, deal=1, dealer=data["dealer"], trumps=data["trumps"],
                      scores=[0] * seats)  # fmt: skip
    assert data["tiebreak"] is None
    assert game.write(game.new({"preset": "classic"}, seats, "b62")) == data
    assert game.write(game.read(data)) == data


def test_b62_other_seeds_give_other_deals(game):
    deals = {
        json.dumps(game.write(game.new({"preset": "classic"}, 2, f"b62-{n}"))["hands"])
        for n in range(5)
    }
    assert len(deals) > 1


def test_b63_the_score_of_a_deal_in_play(game):
    state = position(
        game, 3, trumps="per_player D C H", out=[(2, "trump_king")], bank="JH/0", turn=1,
        hands={0: "9C 7D", 1: "8D"}, captured={0: "AS QS", 2: "TS 9S KH"},
    )  # fmt: skip
    assert sides_of(game.score(state)) == [
        side(15),
        side(0),
        side(15, "trump_king", 1, 30, total=45),
    ]
