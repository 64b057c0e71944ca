"""Bank's rejections of bad input: every consistency rule of a state (each with the JSON
path it names), moves that are malformed or illegal, and rule options."""

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from engine.bank import (
    PRESETS,
    MoveError,
    Rules,
    RulesError,
    State,
    StateError,
    legal_moves,
    new_game,
)
from engine.bank.moves import Move, read_move
from engine.bank.play import apply
from tests.engine.bank_builders import CARD_POINTS, CLASSIC, bank_state

Data = dict[str, Any]


def base() -> Data:
    """A consistent 3-seat position: seat 0 to move against seat 0's own queen."""
    return bank_state(
        3,
        hands={0: "9C 7D KS", 1: "8D JC", 2: "AH QH"},
        bank="JH/P QS/0",
        trumps="per_player D C H",
        stock="TC",
    )


def over(data: Data) -> Data:
    """`data` as a finished match won by seat 0."""
    data.update(status="match_over", turn=None, winners=[0], winner=0)
    return data


def emptied(data: Data, seat: int) -> Data:
    """`data` with `seat`'s hand moved to the stock."""
    data["stock"] += data["hands"][seat]
    data["hands"][seat] = []
    return data


def taken(data: Data, after_capture: str = "virtual_target") -> Data:
    """`data` just after seat 0 took the bank: bank empty, target per `after_capture`."""
    data["rules"]["after_capture"] = after_capture
    data["captured"][0] += [entry["card"] for entry in data["bank"]]
    data["bank"] = []
    data["target"] = (
        None if after_capture == "free_lead" else {"card": "QS", "by": None, "virtual": True}
    )
    return data


def setting(path: str, value: object) -> Callable[[Data], Data]:
    """A mutation that sets the field at a dotted path."""

    def mutate(data: Data) -> Data:
        *parents, last = path.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return data

    return mutate


def both(*mutations: Callable[[Data], Data]) -> Callable[[Data], Data]:
    def mutate(data: Data) -> Data:
        for mutation in mutations:
            data = mutation(data)
        return data

    return mutate


def trump_mode(mode: str, common: dict[str, int], personal: list) -> Callable[[Data], Data]:
    def mutate(data: Data) -> Data:
        data["rules"]["trump_mode"] = mode
        data["trumps"] = {"common": common, "personal": personal}
        return data

    return mutate


PLAIN = {"C": 0, "D": 0, "H": 0, "S": 0}

# (what is wrong, mutation, the path the error must name), grouped by the contract's rules.
INCONSISTENT: list[tuple[str, Callable[[Data], Data], str]] = [
    # the shape of the object
    ("not an object", lambda data: [data], "state"),
    ("a key missing", lambda data: {k: v for k, v in data.items() if k != "idle"}, "idle"),
    ("an unknown key", setting("colour", "red"), "colour"),
    ("another game", setting("game", "basra"), "game"),
    ("a seed that is no string", setting("seed", 7), "seed"),
    ("an unknown status", setting("status", "paused"), "status"),
    # 1: rules, seats and one entry per seat
    ("rules not an object", setting("rules", "classic"), "rules"),
    ("an unknown preset", setting("rules.preset", "modern"), "rules.preset"),
    ("an unknown option", setting("rules.jokers", True), "rules.jokers"),
    ("a bad option value", setting("rules.trump_mode", "all"), "rules.trump_mode"),
    ("five seats", setting("seats", 5), "seats"),
    ("one seat", setting("seats", 1), "seats"),
    ("seats as text", setting("seats", "3"), "seats"),
    ("hands for two seats", lambda data: {**data, "hands": data["hands"][:2]}, "hands"),
    ("captured for four seats", setting("captured", [[], [], [], []]), "captured"),
    ("scores for two seats", setting("scores", [0, 0]), "scores"),
    ("a score that is no integer", setting("scores.1", 1.5), "scores.1"),
    ("personal trumps for two seats", setting("trumps.personal", ["D", "C"]), "trumps.personal"),
    ("a dealer off the table", setting("dealer", 3), "dealer"),
    ("a starter below 0", setting("starter", -1), "starter"),
    ("a bank card laid by no seat", setting("bank.1.by", 3), "bank.1.by"),
    (
        "an out seat off the table",
        setting("out", [{"seat": 4, "place": 1, "finish": "plain", "bonus": 20}]),
        "out.0.seat",
    ),
    ("a turn off the table", setting("turn", 3), "turn"),
    # 2: every card exactly once
    ("a card twice", setting("hands.1.0", "9C"), "hands.1.0"),
    (
        "a card in the stock and a hand",
        lambda data: {**data, "stock": ["KS", *data["stock"]]},
        "stock.0",
    ),
    ("a card missing", lambda data: {**data, "stock": data["stock"][:-1]}, "state"),
    ("a card not of the pack", setting("hands.2.0", "2H"), "hands.2.0"),
    ("a string that is no card", setting("stock.0", "XX"), "stock.0"),
    ("a captured card that is no card", setting("captured", [[], [5], []]), "captured.1.0"),
    ("a bank card that is no card", setting("bank.0.card", "1S"), "bank.0.card"),
    # 3: trumps match the trump mode
    ("a common trump under per_player", setting("trumps.common.H", 1), "trumps.common.H"),
    ("a class above senior", setting("trumps.common.C", 3), "trumps.common.C"),
    (
        "common without a suit",
        setting("trumps.common", {"C": 0, "D": 0, "H": 0}),
        "trumps.common",
    ),
    ("two seats with one trump", setting("trumps.personal.2", "D"), "trumps.personal.2"),
    ("a seat without its trump", setting("trumps.personal.1", None), "trumps.personal.1"),
    ("a personal trump that is no suit", setting("trumps.personal.0", "X"), "trumps.personal.0"),
    (
        "a personal trump under none",
        trump_mode("none", PLAIN, ["D", None, None]),
        "trumps.personal.0",
    ),
    (
        "a common trump under none",
        trump_mode("none", {**PLAIN, "S": 1}, [None] * 3),
        "trumps.common.S",
    ),
    ("no suit under single", trump_mode("single", PLAIN, [None] * 3), "trumps.common"),
    (
        "two suits under single",
        trump_mode("single", {**PLAIN, "C": 1, "H": 1}, [None] * 3),
        "trumps.common",
    ),
    (
        "a senior suit under single",
        trump_mode("single", {**PLAIN, "C": 2}, [None] * 3),
        "trumps.common",
    ),
    (
        "hearts under double",
        trump_mode("double", {**PLAIN, "D": 1, "H": 1}, [None] * 3),
        "trumps.common.H",
    ),
    (
        "swapped classes under senior_junior",
        trump_mode("senior_junior", {**PLAIN, "D": 2, "S": 1}, [None] * 3),
        "trumps.common.D",
    ),
    # 4: a pack card only at the bottom
    (
        "a pack card on top",
        both(setting("bank.1.by", None), setting("target.by", None)),
        "bank.1.by",
    ),
    # 5: the target
    ("no target on a bank", setting("target", None), "target"),
    ("a target that is not the top card", setting("target.card", "JH"), "target.card"),
    ("a target laid by another seat", setting("target.by", 1), "target.by"),
    ("a virtual target on a bank", setting("target.virtual", True), "target.virtual"),
    ("a target without virtual", setting("target", {"card": "QS", "by": 0}), "target.virtual"),
    (
        "a target under free_lead",
        both(taken, setting("rules.after_capture", "free_lead")),
        "target",
    ),
    ("no target on an empty bank", both(taken, setting("target", None)), "target"),
    ("a virtual target with an owner", both(taken, setting("target.by", 0)), "target.by"),
    (
        "a real target on an empty bank",
        both(taken, setting("target.virtual", False)),
        "target.virtual",
    ),
    ("a virtual target nobody took", both(taken, setting("target.card", "TC")), "target.card"),
    # 6: out
    (
        "out in a wrong place",
        both(
            lambda data: emptied(data, 1),
            setting("out", [{"seat": 1, "place": 2, "finish": "plain", "bonus": 10}]),
        ),
        "out.0.place",
    ),
    (
        "an unknown finish",
        both(
            lambda data: emptied(data, 1),
            setting("out", [{"seat": 1, "place": 1, "finish": "ace", "bonus": 20}]),
        ),
        "out.0.finish",
    ),
    (
        "a wrong bonus",
        both(
            lambda data: emptied(data, 1),
            setting("out", [{"seat": 1, "place": 1, "finish": "run", "bonus": 20}]),
        ),
        "out.0.bonus",
    ),
    (
        "an out entry without a bonus",
        setting("out", [{"seat": 1, "place": 1, "finish": "run"}]),
        "out.0.bonus",
    ),
    (
        "one seat out twice",
        setting(
            "out",
            [
                {"seat": 1, "place": 1, "finish": "plain", "bonus": 20},
                {"seat": 1, "place": 2, "finish": "plain", "bonus": 10},
            ],
        ),
        "out.1.seat",
    ),
    (
        "every seat out",
        setting(
            "out",
            [
                {"seat": 1, "place": 1, "finish": "plain", "bonus": 20},
                {"seat": 2, "place": 2, "finish": "plain", "bonus": 10},
                {"seat": 0, "place": 3, "finish": "plain", "bonus": 10},
            ],
        ),
        "out",
    ),
    (
        "an out seat holding cards",
        setting("out", [{"seat": 1, "place": 1, "finish": "plain", "bonus": 20}]),
        "out.0.seat",
    ),
    ("an empty hand not out", lambda data: emptied(data, 2), "hands.2"),
    # 7: status, turn and winners
    ("no turn while playing", setting("turn", None), "turn"),
    (
        "a turn without cards",
        both(
            lambda data: emptied(data, 1),
            setting("turn", 1),
            setting("out", [{"seat": 1, "place": 1, "finish": "plain", "bonus": 20}]),
        ),
        "turn",
    ),
    (
        "one holder while playing",
        both(
            lambda data: emptied(emptied(data, 1), 2),
            setting(
                "out",
                [
                    {"seat": 1, "place": 1, "finish": "plain", "bonus": 20},
                    {"seat": 2, "place": 2, "finish": "plain", "bonus": 10},
                ],
            ),
        ),
        "hands",
    ),
    ("a winner while playing", setting("winner", 0), "winner"),
    ("winners while playing", setting("winners", [0]), "winners"),
    (
        "a deal already blocked",
        both(
            taken,
            lambda data: {
                **data,
                "captured": [data["captured"][0] + data["stock"], [], []],
                "stock": [],
            },
            setting("idle", 3),
        ),
        "idle",
    ),
    ("a turn once the match is over", both(over, setting("turn", 0)), "turn"),
    (
        "no winners once over",
        both(over, setting("winners", []), setting("winner", None)),
        "winners",
    ),
    (
        "winners out of order",
        both(over, setting("winners", [2, 0]), setting("winner", None)),
        "winners",
    ),
    ("a winner outside winners", both(over, setting("winner", 1)), "winner"),
    ("a single winner for a shared win", both(over, setting("winners", [0, 1])), "winner"),
    ("a winner seat off the table", both(over, setting("winners", [0, 5])), "winners.1"),
    (
        "nobody holding cards at the end",
        both(
            over,
            lambda data: emptied(emptied(emptied(data, 0), 1), 2),
            setting(
                "out",
                [
                    {"seat": 0, "place": 1, "finish": "plain", "bonus": 20},
                    {"seat": 1, "place": 2, "finish": "plain", "bonus": 10},
                ],
            ),
        ),
        "hands.2",
    ),
    # 8: tie-break, deal, drawn, idle
    (
        "a tie-break of one seat",
        setting("tiebreak", {"eligible": [1], "extra_deals": 0}),
        "tiebreak.eligible",
    ),
    (
        "a tie-break listing a seat twice",
        setting("tiebreak", {"eligible": [1, 1], "extra_deals": 0}),
        "tiebreak.eligible",
    ),
    (
        "a fifth extra deal while playing",
        setting("tiebreak", {"eligible": [0, 1], "extra_deals": 5}),
        "tiebreak.extra_deals",
    ),
    (
        "a sixth extra deal",
        both(over, setting("tiebreak", {"eligible": [0, 1], "extra_deals": 6})),
        "tiebreak.extra_deals",
    ),
    (
        "a tie-break without extra deals",
        setting("tiebreak", {"eligible": [0, 1]}),
        "tiebreak.extra_deals",
    ),
    ("deal 0", setting("deal", 0), "deal"),
    ("deal 201", setting("deal", 201), "deal"),
    ("drawn as text", setting("drawn", "yes"), "drawn"),
    ("a negative idle", setting("idle", -1), "idle"),
]


def test_the_base_position_is_consistent() -> None:
    assert State.from_json(base()).to_json()["hands"] == base()["hands"]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [pytest.param(mutate, path, id=what) for what, mutate, path in INCONSISTENT],
)
def test_an_inconsistent_state_names_the_field(mutate: Callable[[Data], Data], path: str) -> None:
    data = mutate(copy.deepcopy(base()))
    with pytest.raises(StateError) as raised:
        State.from_json(data)
    assert raised.value.path == path
    assert raised.value.reason and "'" not in raised.value.reason.replace("'s", "")


def test_a_match_over_reads_back() -> None:
    data = over(base())
    assert (
        State.from_json(data).to_json()
        == State.from_json(State.from_json(data).to_json()).to_json()
    )


def test_a_state_without_a_seed_is_valid() -> None:
    data = base()
    del data["seed"]
    assert "seed" not in State.from_json(data).to_json()


def test_hands_and_piles_are_written_in_canonical_order() -> None:
    data = base()
    data["hands"][0] = ["KS", "9C", "7D"]
    assert State.from_json(data).to_json()["hands"][0] == ["9C", "7D", "KS"]


# --- moves ------------------------------------------------------------------------------


def position(**fields: Any) -> State:
    defaults: dict[str, Any] = {"hands": {0: "JH QH KH TH 8C 9S", 1: "6C 7C"}, "bank": "9D/P TS/1"}
    return State.from_json(bank_state(2, **{**defaults, **fields}))


BAD_MOVES: list[tuple[str, object, str]] = [
    ("not an object", ["lay", "JH"], "move"),
    ("no type", {"card": "JH"}, "move.type"),
    ("an unknown type", {"type": "play", "card": "JH"}, "move.type"),
    ("a lay without a card", {"type": "lay"}, "move.card"),
    ("a lay of no card", {"type": "lay", "card": "XX"}, "move.card"),
    ("a lay of a card not in Bank's pack", {"type": "lay", "card": "2C"}, "move.card"),
    ("a lay of a card not in hand", {"type": "lay", "card": "6C"}, "move.card"),
    ("a lay that does not beat", {"type": "lay", "card": "KH"}, "move.card"),
    ("a lay of a card as a number", {"type": "lay", "card": 10}, "move.card"),
    ("a run of three", {"type": "run", "cards": ["JH", "QH", "KH"]}, "move.cards"),
    ("a run given as text", {"type": "run", "cards": "JH QH KH TH"}, "move.cards"),
    ("a run out of order", {"type": "run", "cards": ["QH", "JH", "KH", "TH"]}, "move.cards"),
    ("a run with a gap", {"type": "run", "cards": ["JH", "QH", "KH", "9S"]}, "move.cards"),
    (
        "a run naming a card twice",
        {"type": "run", "cards": ["JH", "QH", "JH", "TH"]},
        "move.cards.2",
    ),
    (
        "a run with a card not in hand",
        {"type": "run", "cards": ["QH", "KH", "TH", "AH"]},
        "move.cards.3",
    ),
    ("a quad that is a run", {"type": "quad", "cards": ["JH", "QH", "KH", "TH"]}, "move.cards"),
    ("a quad not held", {"type": "quad", "cards": ["9C", "9D", "9H", "9S"]}, "move.cards.0"),
    ("a draw while a card beats", {"type": "draw"}, "move.type"),
    ("a pass while a card beats", {"type": "pass"}, "move.type"),
    ("a move object not listed", Move("lay", ("KH",)), "move.card"),
]


@pytest.mark.parametrize(
    ("move", "path"), [pytest.param(move, path, id=what) for what, move, path in BAD_MOVES]
)
def test_a_bad_move_names_the_field_and_changes_nothing(move: object, path: str) -> None:
    state = position()
    before = state.to_json()
    with pytest.raises(MoveError) as raised:
        apply(state, move)
    assert raised.value.path == path
    assert raised.value.reason
    assert state.to_json() == before


def test_card_input_forms_are_accepted() -> None:
    state = position(hands={0: "TD 9S 8C", 1: "6C 7C"}, bank="KS/P AD/1")
    for text in ("10d", "td", "Td", "TD", "10D"):
        assert read_move(state, {"type": "lay", "card": text}) == Move("lay", ("TD",))


def test_a_quad_in_any_order_is_laid_in_that_order() -> None:
    state = position(hands={0: "QC QD QH QS 9S", 1: "6C 7C"})
    move = read_move(state, {"type": "quad", "cards": ["qs", "QC", "10h"[:0] + "QH", "QD"]})
    assert move == Move("quad", ("QS", "QC", "QH", "QD"))


def test_a_run_is_read_from_either_end() -> None:
    state = position()
    assert read_move(state, {"type": "run", "cards": ["TH", "KH", "QH", "JH"]}).cards[0] == "TH"
    assert read_move(state, {"type": "run", "cards": ["JH", "QH", "KH", "10h"]}).cards[-1] == "TH"


def test_draw_and_pass_refusals_say_why() -> None:
    blocked = position(hands={0: "7C 9H", 1: "JC QC"}, bank="9S/P 6S/1", stock="KC")
    with pytest.raises(MoveError, match="before drawing"):
        read_move(blocked, {"type": "pass"})
    drawn = blocked._replace(drawn=True)
    with pytest.raises(MoveError, match="twice"):
        read_move(drawn, {"type": "draw"})
    empty = State.from_json(
        bank_state(2, hands={0: "7C 9H", 1: "JC QC"}, bank="9S/P 6S/1", rest_to=1)
    )
    with pytest.raises(MoveError, match="stock is empty"):
        read_move(empty, {"type": "draw"})


def test_no_move_on_a_finished_match() -> None:
    state = State.from_json(over(base()))
    with pytest.raises(MoveError) as raised:
        read_move(state, {"type": "pass"})
    assert raised.value.path == "move"


@pytest.mark.parametrize("laid", [("8H", "9H", "JH", "QH"), ("QH", "JH", "9H", "8H")])
def test_a_run_ends_the_turn_whatever_its_top_card(laid: tuple[str, ...]) -> None:
    """§7.3: no follow-up after a run, even one topped by an eight (which alone would owe one)."""
    state = position(hands={0: "8H 9H JH QH 6S", 1: "6C 7C"})
    after, events = apply(state, {"type": "run", "cards": list(laid)})
    assert [event["type"] for event in events] == ["run"]
    assert (after.turn, after.target.card, after.drawn) == (1, laid[-1], False)


# --- rule options -----------------------------------------------------------------------


def test_classic_is_every_default() -> None:
    assert Rules.from_json({"preset": "classic"}) == Rules() == PRESETS["classic"]
    assert {k: v for k, v in Rules().to_json().items() if k != "preset"} == CLASSIC
    assert Rules.from_json({}).preset == "classic"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("target_score", 100),
        ("dealer_rule", "finisher"),
        ("dealer_rule", "min_points"),
        ("trump_mode", "senior_junior"),
        ("after_seven", "draw_then_play"),
        ("after_capture", "turn_up"),
        ("hand_penalty", False),
        ("penalty_mode", "per_card"),
        ("fixed_penalty", 56),
        ("per_card_penalty", 6),
    ],
)
def test_an_override_is_resolved_and_echoed(option: str, value: object) -> None:
    rules = Rules.from_json({"preset": "classic", option: value})
    assert rules.to_json() == {"preset": "classic", **CLASSIC, option: value}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"preset": "modern"}, "preset"),
        ({"preset": 3}, "preset"),
        ({"jokers": True}, "jokers"),
        ({"target_score": 0}, "target_score"),
        ({"target_score": True}, "target_score"),
        ({"target_score": 248.0}, "target_score"),
        ({"dealer_rule": "winner"}, "dealer_rule"),
        ({"trump_mode": "per_seat"}, "trump_mode"),
        ({"after_seven": "skip_twice"}, "after_seven"),
        ({"after_capture": "none"}, "after_capture"),
        ({"hand_penalty": 1}, "hand_penalty"),
        ({"penalty_mode": "fixed_points"}, "penalty_mode"),
        ({"fixed_penalty": 30}, "fixed_penalty"),
        ({"fixed_penalty": "31"}, "fixed_penalty"),
        ({"per_card_penalty": 4}, "per_card_penalty"),
        ("classic", "rules"),
    ],
)
def test_a_bad_option_names_it(data: object, path: str) -> None:
    with pytest.raises(RulesError) as raised:
        Rules.from_json(data)
    assert raised.value.path == path


@pytest.mark.parametrize("seats", [0, 1, 5, "2", None, 2.0])
def test_seats_outside_two_to_four_are_refused(seats: object) -> None:
    with pytest.raises(RulesError) as raised:
        new_game(Rules(), seats, "seed")
    assert raised.value.path == "seats"


@pytest.mark.parametrize("mode", ["per_player", "none", "single", "double", "senior_junior"])
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_new_match_draws_trumps_that_fit_the_mode(mode: str, seats: int) -> None:
    state = new_game(Rules(trump_mode=mode), seats, f"trumps/{mode}")
    assert State.from_json(state.to_json()) == state
    assert new_game(Rules(trump_mode=mode), seats, f"trumps/{mode}") == state
    assert len({suit for suit in state.personal if suit}) == (seats if mode == "per_player" else 0)


def test_trumps_and_first_dealer_vary_with_the_seed() -> None:
    matches = [new_game(Rules(), 4, f"seed {index}") for index in range(40)]
    assert len({state.personal for state in matches}) > 5
    assert {state.dealer for state in matches} == {0, 1, 2, 3}


# --- §16 along random play ---------------------------------------------------------------


def next_holder(hands: tuple[tuple[str, ...], ...], seat: int) -> int:
    seats = len(hands)
    return next(
        (seat + step) % seats for step in range(1, seats + 1) if hands[(seat + step) % seats]
    )


def check_step(before: State, move: Move, after: State, events: list[dict[str, Any]]) -> None:
    """What §16 says of one move that does not end the deal."""
    seat = before.turn
    kinds = [event["type"] for event in events]
    if move.type == "draw":
        assert kinds == ["draw"] and (after.turn, after.drawn, after.idle) == (seat, True, 0)
        assert after.stock == before.stock[1:] and before.stock[0] in after.hands[seat]
        return
    assert kinds[0] == move.type
    left = [card for card in before.hands[seat] if card not in move.cards]
    follow_up = move.type == "quad" or (move.type == "lay" and move.cards[0][0] == "8")
    if follow_up and left:
        assert kinds == [move.type]
        assert (after.turn, after.drawn, after.idle) == (seat, False, 0)
        assert after.target == (move.cards[-1], seat, False)
        return
    target = before.target
    takes = (
        move.type == "pass"
        and target is not None
        and not target.virtual
        and target.by not in (None, seat)
        and len(before.bank) >= 2
    )
    out = [event for event in events if event["type"] == "out"]
    assert bool(out) == (not left and move.type != "pass")
    king_finish = bool(out) and out[0]["finish"] in ("trump_king", "four_kings")
    assert ("capture" in kinds) == (takes or king_finish)
    if takes:
        taken = [entry.card for entry in before.bank]
        worth = sum(CARD_POINTS.get(card[0], 0) for card in taken)
        assert events[1] == {
            "type": "capture", "seat": target.by, "cards": taken, "points": worth, "why": "pass"
        }  # fmt: skip
    turn = next_holder(after.hands, seat)
    for event in events:
        if event["type"] == "skip":
            assert event["seat"] == turn
            turn = next_holder(after.hands, turn)
    assert after.turn == turn
    if move.type == "pass" and "capture" not in kinds:
        assert after.idle == before.idle + 1 and after.bank == before.bank


@pytest.mark.parametrize("after_seven", ["skip", "draw_then_play", "skip_and_draw", "none"])
@pytest.mark.parametrize("after_capture", ["virtual_target", "free_lead", "turn_up"])
def test_random_play_follows_the_steps_of_a_move(after_seven: str, after_capture: str) -> None:
    for number in range(8):
        rng = random.Random(number)
        rules = Rules(after_seven=after_seven, after_capture=after_capture, target_score=60)
        state = new_game(rules, 2 + number % 3, f"steps/{number}")
        while state.turn is not None:
            moves = legal_moves(state)
            # Runs and quads are rare in random hands: play one whenever it is there.
            free = [move for move in moves if move.type in ("run", "quad")]
            move = rng.choice(free or moves)
            after, events = apply(state, move)
            if not any(event["type"] == "deal_end" for event in events):
                check_step(state, move, after, events)
            state = after


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_a_deal_left_undealt_differs_only_at_its_end(seats: int) -> None:
    """`deal_next=False` (the playouts' apply) changes nothing within a deal; a move that
    ends one leaves it scored as the rules score it, with nobody to move, and no next deal."""
    rng = random.Random(seats)
    state = new_game(Rules(target_score=150), seats, f"deal-next/{seats}")
    ends = 0
    while state.turn is not None:
        move = rng.choice(legal_moves(state))
        after, events = apply(state, move)
        kept, kept_events = apply(state, move, deal_next=False)
        if events[-1]["type"] == "deal":
            ends += 1
            assert kept_events == events[:-1] and kept.turn is None
            assert (kept.scores, kept.tiebreak, kept.deal) == (
                after.scores, after.tiebreak, after.deal - 1
            )  # fmt: skip
        else:
            assert (kept, kept_events) == (after, events)
        state = after
    assert ends >= 2
