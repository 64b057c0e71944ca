"""The speed-ups remember and trust things: each one must answer exactly as the careful
path does, for bad input above all."""

import copy
import random
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import bank, fields
from engine.bank import State as BankState
from engine.bank import moves as bank_moves
from engine.bank import state as bank_state
from engine.bank.cards import DECK as BANK_DECK
from engine.bank.cards import QUADS, RUNS
from engine.bank.moves import QUAD_MOVES, RUN_MOVES, free_plays
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
from engine.basra import moves as basra_moves
from engine.basra import state as basra_state
from engine.basra.moves import card_moves, clear_caches, hand_moves, is_final_card, sum_captures
from engine.cards import RANKS, canonical
from engine.errors import GameError
from engine.game import games
from tests.engine.builders import LEVANTINE, single_play

# A 3-seat position with a pack card under a laid one and personal trumps.
from tests.engine.test_bank_rules import base as bank_position


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


def test_rules_with_a_nested_list_are_read_and_rejected():
    with pytest.raises(RulesError) as raised:
        Rules.from_json({"seats_allowed": [[2]]})
    assert raised.value.path == "seats_allowed"


def test_a_tuple_reads_as_the_list_it_is_written_as_remembered_or_not():
    # Read first, the tuple is resolved by itself; the list then finds it remembered.
    assert Rules.from_json({"seats_allowed": (4, 2), "target_score": 77}).seats_allowed == (2, 4)
    assert Rules.from_json({"seats_allowed": [4, 2], "target_score": 77}).seats_allowed == (2, 4)


def test_a_subclass_of_str_spelling_remembered_rules_is_not_taken_for_them():
    class Text(str):
        pass

    Rules.from_json({"capture_policy": "max_cards"})  # remembered
    with pytest.raises(RulesError) as raised:
        Rules.from_json({"capture_policy": Text("max_cards")})
    assert raised.value.path == "capture_policy"


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


@pytest.mark.parametrize("name", ["basra", "bank"])
def test_a_move_read_for_a_state_is_applied_there_without_reading_it_again(name, monkeypatch):
    game = games()[name]
    state = game.new({}, 2, "read-then-apply")
    written = game.write_move(state, game.legal_moves(state)[0])
    game.legal_moves(game.new({}, 2, "another"))  # the last listing: another state's
    move = game.read_move(state, written)
    module = {"basra": basra_moves, "bank": bank_moves}[name]
    monkeypatch.setattr(module, "named_move", lambda *_: pytest.fail("read again"))
    monkeypatch.setattr(sys.modules[f"engine.{name}.play"], "named_move", module.named_move)
    assert game.apply(state, move)[0] != state


def test_a_move_read_for_another_state_is_checked_afresh():
    state = single_play(LEVANTINE, ["5H"], ["5S", "9C"])
    other = single_play(LEVANTINE, ["4H"], ["5S", "9C"])
    lay = read_move(other, {"card": "5S"})
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


def test_the_kept_capture_searches_are_bounded_and_answer_as_a_fresh_search():
    from engine.basra.moves import SEARCHED, SEARCHES_KEPT, search_by_vector, search_captures

    clear_caches()
    kept = SEARCHED["max_cards"]
    kept.update((number << 4, ()) for number in range(1, SEARCHES_KEPT + 1))  # full
    joining = sum(1 << index for index in range(6))  # the ace to six of the first suit
    found = search_captures(9, joining, "max_cards")
    assert len(kept) == 1  # emptied, then this search kept
    assert found == search_by_vector(9, joining, "max_cards")
    assert search_captures(9, joining, "max_cards") is found  # kept
    clear_caches()
    assert not kept


def test_a_cover_takes_whole_exactly_when_it_uses_every_card_of_each_value_it_uses():
    from engine.basra.covers import takes_whole, unit

    table = 2 * unit(2) + unit(3) + 4 * unit(1)  # two 2s, a 3, four aces
    assert takes_whole(2 * unit(2), table)
    assert takes_whole(2 * unit(2) + unit(3) + 4 * unit(1), table)
    assert not takes_whole(unit(2), table)  # one of the two 2s: two ways to pick it
    assert not takes_whole(unit(3) + 3 * unit(1), table)



# --- Bank's state reader: the plain form is taken at once, anything else read carefully ---


def test_a_bank_state_in_other_accepted_forms_reads_as_the_plain_one():
    data = bank_position()
    plain = BankState.from_json(copy.deepcopy(data))
    data["hands"][0] = ["ks", "9C", "7d"]  # out of order and lowercase
    data["bank"][1]["card"] = "qs"
    data["target"]["card"] = "Qs"
    data["stock"] = [card.replace("T", "10") for card in data["stock"]]
    assert BankState.from_json(data) == plain
    assert BankState.from_json(data).to_json() == plain.to_json()


def put_at(form: dict, place: tuple, value: object) -> dict:
    """`form` with `value` put at `place`, a path of keys and indexes into it."""
    holder = form
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = value
    return form


@pytest.mark.parametrize(
    ("place", "value", "path"),
    [
        (("bank", 1, "by"), True, "bank.1.by"),  # equal to seat 1, but not a seat
        (("bank", 1, "by"), None, "bank.1.by"),  # a pack card above the bottom
        (("bank", 0, "by"), 3, "bank.0.by"),
        (("bank", 1), ["QS", 0], "bank.1"),
        (("bank", 1, "card"), ["QS"], "bank.1.card"),
        (("target", "by"), False, "target.by"),  # equal to seat 0
        (("target", "virtual"), 0, "target.virtual"),
        (("target", "card"), "QX", "target.card"),
        (("scores", 1), True, "scores.1"),
        (("scores", 2), 1.0, "scores.2"),
        (("trumps", "common", "H"), True, "trumps.common.H"),
        (("trumps", "common", "S"), 3, "trumps.common.S"),
        (("trumps", "personal", 1), ["C"], "trumps.personal.1"),
        (("trumps", "personal", 2), "X", "trumps.personal.2"),
        (("hands", 1, 1), ["JC"], "hands.1.1"),
        (("hands", 2), "AH QH", "hands.2"),
        (("captured", 0), [True], "captured.0.0"),
        (("winners",), [1, 0], "winners"),
    ],
)
def test_a_bank_field_that_only_looks_plain_is_named(place, value, path):
    data = put_at(bank_position(), place, value)
    with pytest.raises(StateError) as raised:
        BankState.from_json(data)
    assert raised.value.path == path


def test_a_bank_card_twice_is_named_where_it_was_sent_not_where_it_sorts():
    data = bank_position()
    data["hands"][0] = ["KS", "9C", "7D"]
    data["hands"][1] = ["8D", "KS"]  # JC missing, KS twice
    with pytest.raises(StateError) as raised:
        BankState.from_json(data)
    assert raised.value.path == "hands.1.1"
    assert "hands.0.0" in raised.value.reason


# --- Bank's apply trusts a move only as listed, for that very state -----------------------


def test_a_bank_move_listed_for_another_state_is_checked_afresh():
    state = BankState.from_json(bank_position())
    [trump] = bank.legal_moves(state)  # seat 0's 7D, its own trump, alone beats its queen
    after, _ = bank.apply(state, trump)
    assert after.turn != 0
    with pytest.raises(bank.MoveError) as raised:
        bank.apply(after, trump)  # another seat to move, and the 7D lies in the bank
    assert raised.value.path == "move.card"


def test_a_plain_tuple_equal_to_a_listed_bank_move_is_no_move():
    state = BankState.from_json(bank_position())
    listed = bank.legal_moves(state)
    with pytest.raises(bank.MoveError) as raised:
        bank.apply(state, tuple(listed[0]))  # equal to the Move, but not one
    assert raised.value.path == "move"


# Hands that hold runs and quads often (a random set of cards seldom does), and more cards.
free_play_hands = st.builds(
    lambda runs, quads, more: set().union(*runs, *quads, more),
    st.lists(st.sampled_from(RUNS), max_size=3),
    st.lists(st.sampled_from(tuple(QUADS.values())), max_size=2),
    st.sets(st.sampled_from(BANK_DECK), max_size=12),
)


@given(free_play_hands)
def test_the_free_plays_read_off_tables_are_the_quads_and_runs_a_hand_holds(cards):
    hand = canonical(cards)
    # Quads in the canonical order of their ranks (A first), then runs suit by suit.
    ranks = sorted(QUADS, key=RANKS.index)
    quads = [move for rank in ranks if cards >= set(QUADS[rank]) for move in QUAD_MOVES[rank]]
    runs = [move for run in RUNS if cards >= set(run) for move in RUN_MOVES[run]]
    assert free_plays(hand) == (*quads, *runs)


# --- A state's cards: checked at once in the plain form, else read field by field ---------

STATES = {"basra": basra_state, "bank": bank_state}
PILES = {  # per game, the fields holding cards: a list per seat or side, or one list
    "basra": {"hands": True, "table": False, "stock": False, "captured": True},
    "bank": {"hands": True, "stock": False, "bank": False, "captured": True},
}


def played_form(name: str, seats: int, seed: int, moves: int) -> dict:
    """The written form of a seeded random match of `name` after up to `moves` moves."""
    game = games()[name]
    catalogue = game.catalogue()
    rng = random.Random(seed)
    state = game.new({"preset": catalogue["default_preset"]}, seats, f"cards-{seed}")
    for _ in range(moves):
        if game.to_move(state) is None:
            break
        state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
    return game.write(state)


def read_outcome(name: str, form: dict) -> object:
    """What reading `form` gives: the state, or the error's kind, path and reason."""
    try:
        return games()[name].read(copy.deepcopy(form))
    except GameError as error:
        return type(error), error.path, error.reason


@st.composite
def damaged_forms(draw: st.DrawFn) -> tuple[str, dict]:
    """A game's written form with one card, pile or bank entry replaced, dropped or added:
    another card (twice then), another accepted spelling, a card of no pack, a value of
    another JSON type."""
    name = draw(st.sampled_from(sorted(PILES)))
    game = games()[name]
    seats = draw(st.sampled_from(sorted(game.catalogue()["seats"])))
    form = played_form(name, seats, draw(st.integers(0, 10**6)), draw(st.integers(0, 40)))
    field, per_seat = draw(st.sampled_from(sorted(PILES[name].items())))
    holder = form[field][draw(st.integers(0, len(form[field]) - 1))] if per_seat else form[field]
    some_card = draw(st.sampled_from(sorted(STATES[name].CARDS)))
    value = draw(
        st.sampled_from(
            [some_card, some_card.lower(), some_card.replace("T", "10"), "2C", "ZZ", True, 7,
             None, [some_card], {"card": some_card, "by": None}]
        )
    )  # fmt: skip
    action = draw(st.sampled_from(["replace", "drop", "add", "whole"] if holder else ["add"]))
    if action == "whole":
        form[field] = value  # the whole field, not a list of piles (or of cards)
        return name, form
    index = draw(st.integers(0, len(holder) - 1)) if holder else 0
    if field == "bank" and action != "drop":
        value = {"card": value, "by": holder[index]["by"] if holder else None}
    if action == "replace":
        holder[index] = value
    elif action == "drop":
        del holder[index]
    else:
        holder.insert(index, value)
    return name, form


@given(damaged_forms())
def test_the_cards_checked_at_once_read_as_the_careful_readers_read_them(damaged):
    name, form = damaged
    at_once = read_outcome(name, form)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(STATES[name], "plain_cards", lambda data, seats: None)
        assert read_outcome(name, form) == at_once


@pytest.mark.parametrize("name", sorted(PILES))
def test_a_written_form_has_its_cards_checked_at_once(name):
    for seed in range(20):
        form = played_form(name, 2, seed, seed * 3)
        assert STATES[name].plain_cards(form, form["seats"]) is not None


# --- Bank's rules, seats and trumps: read once, then found by their text -----------------


@st.composite
def damaged_setups(draw: st.DrawFn) -> tuple[dict, dict]:
    """A written Bank form with its rules, seats or trumps changed, and its twin: the same
    form with a value equal in Python, which reads without error where the value put in
    the form may not (`true` for 1, 2.0 for 2, 0 for false: equal, and not in JSON)."""
    pairs = [(0, 0), (1, 1), (2, 2), (3, 3), (1.0, 1), (2.0, 2), (True, 1), (False, 0),
             (None, None), ("C", "C"), ("S", "S"), ("classic", "classic"), ([], []), ({}, {})]
    form = played_form("bank", draw(st.sampled_from([2, 3, 4])), draw(st.integers(0, 10**6)), 9)
    value, twin = draw(st.sampled_from(pairs))
    place = draw(
        st.sampled_from(
            [("seats",), ("trumps",), ("trumps", "personal"), ("rules", "target_score"),
             ("rules", "hand_penalty"), ("rules", "trump_mode"), ("rules", "preset")]
            + [("trumps", "common", suit) for suit in "CDHS"]
            + [("trumps", "personal", seat) for seat in range(form["seats"])]
        )
    )  # fmt: skip
    return put_at(copy.deepcopy(form), place, twin), put_at(form, place, value)


@given(damaged_setups())
def test_remembered_setups_read_as_the_careful_readers_read_them(forms):
    twin, damaged = forms
    read_outcome("bank", twin)  # its setup remembered, if it reads
    remembered = read_outcome("bank", damaged), read_outcome("bank", damaged)
    bank_state.SETUP.found.clear()  # read afresh, by the careful readers
    assert remembered == (read_outcome("bank", damaged),) * 2


def test_a_full_memo_is_emptied_and_goes_on_remembering(monkeypatch):
    memo = fields.FormMemo()
    monkeypatch.setattr(memo, "SIZE", 3)
    reads = []

    def read(form: dict) -> int:
        reads.append(form["n"])
        return form["n"]

    for n in [0, 1, 2, 0, 3, 4, 4, 1]:
        assert memo.read({"n": n}, read) == n
    assert reads == [0, 1, 2, 3, 4, 1]  # 3 found the memo full; 1 was forgotten then
    assert memo.read({"n": True}, read) is True  # `true` is not 1 in JSON
    assert len(memo.found) <= 3
