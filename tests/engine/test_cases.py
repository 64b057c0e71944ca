"""Every worked case of basra-cases.md, played through real states with the engine."""

from typing import NamedTuple

import pytest

from engine.basra import MoveError, Rules, State, apply, legal_moves, read_move, score
from engine.basra.cards import DECK
from engine.basra.moves import Move
from engine.basra.play import deal_hands, deal_round, match_winner, new_game
from engine.basra.scoring import final_breakdown, running_breakdown
from engine.cards import sort_cards
from tests.engine.builders import (
    EGYPTIAN,
    LEVANTINE,
    build,
    cards,
    final_play,
    rules_with,
    single_play,
)

PRESET_RULES = {"L": LEVANTINE, "E": EGYPTIAN}


class Take(NamedTuple):
    """One outcome of a case: the capture (canonical order), what is left on the table (in
    arrival order) and the basra points, None when the capture is no basra."""

    capture: str
    left: str = ""
    basra: int | None = None


LAY = "lay"
SAME = "same"


class Case(NamedTuple):
    table: str
    play: str
    levantine: list[Take] | str
    egyptian: list[Take] | str | None = SAME  # None: cannot arise under egyptian rules


SINGLE_PLAYS: dict[str, Case] = {
    "C01": Case("AC 2D 3H 4S", "5C", [Take("AC 2D 3H 4S", "", 10)]),
    "C02": Case("2C 6D 4H TS", "TH", [Take("6D 4H TS", "2C")]),
    "C03": Case("AC 5D 3H 2S 4C", "6H", [Take("AC 4C 5D 2S", "3H")]),
    "C04": Case("AC 2D 4H 3S 6C", "7H", [Take("AC 6C 4H 3S", "2D")]),
    "C05": Case("7S 2C 2H", "9D", [Take("2C 7S", "2H"), Take("2H 7S", "2C")]),
    "C06": Case(
        "2C 6S 3H 5D AD 9S", "9H", [Take("2C AD 6S 9S", "3H 5D"), Take("AD 5D 3H 9S", "2C 6S")]
    ),
    "C07": Case("3C 3D 3H", "6S", [Take("3C 3D", "3H"), Take("3C 3H", "3D"), Take("3D 3H", "3C")]),
    "C08": Case("5C 3D 2H 5S", "5H", [Take("5C 3D 2H 5S", "", 10)]),
    "C09": Case("8C 8D 4H 4S", "8S", [Take("8C 8D 4H 4S", "", 10)]),
    "C10": Case("5C 5D 3H 7S 2C 8D", "TH", [Take("2C 5C 5D 8D 3H 7S", "", 10)]),
    "C11": Case("AC AD", "2S", [Take("AC AD", "", 10)]),
    "C12": Case("AC AD 2S", "AH", [Take("AC AD", "2S")]),
    "C13": Case("9S AD 5C 3H", "9C", [Take("5C AD 3H 9S", "", 10)]),
    "C14": Case("QD", "QS", [Take("QD", "", 10)]),
    "C15": Case("5C 7H QH", "QS", [Take("QH", "5C 7H")]),
    "C16": Case("QC QD 5H", "QS", [Take("QC QD", "5H")]),
    "C17": Case("6C 7H", "KD", LAY),
    "C19": Case("JC 5H", "QS", LAY),
    "C20": Case("", "JC", LAY),
    "C21": Case("JC", "JD", [Take("JC")], [Take("JC", "", 20)]),
    "C22": Case("3C 9H KS", "JH", [Take("3C 9H KS")]),
    "C23": Case("5C", "JD", [Take("5C")]),
    "C24": Case("2C 3H 4S", "7D", [Take("2C 3H 4S", "", 10)]),
    "C25": Case("6C 4D", "7D", [Take("6C 4D", "", 10)]),
    "C26": Case("5C 6D", "7D", [Take("5C 6D")]),
    "C27": Case("QH", "7D", [Take("QH")], [Take("QH", "", 10)]),
    "C28": Case("QH 2C", "7D", [Take("2C QH")]),
    "C29": Case("AC 2D 7H 8S", "7D", [Take("AC 2D 7H 8S")], [Take("AC 2D 7H 8S", "", 10)]),
    "C30": Case("7C 7H 3S 4D", "7D", [Take("7C 4D 7H 3S")], [Take("7C 4D 7H 3S", "", 10)]),
    "C31": Case("7C 7H 3S 4D", "7S", [Take("7C 4D 7H 3S", "", 10)]),
    "C32": Case("6C 6H", "7D", [Take("6C 6H")], [Take("6C 6H", "", 10)]),
    "C33": Case("TC TD", "7D", [Take("TC TD")], [Take("TC TD", "", 10)]),
    "C34": Case("JS", "7D", [Take("JS")], [Take("JS", "", 20)]),
    "C35": Case("7D", "3C", LAY, [Take("7D", "", 10)]),
    "C36": Case("7D", "7S", [Take("7D", "", 10)]),
    "C37": Case("7D 2C", "9H", [Take("2C 7D", "", 10)], None),
    "C38": Case("7D", "JC", [Take("7D")]),
    "C41": Case("", "7D", LAY),
    "C42": Case("8C AD AH", "7D", [Take("8C AD AH", "", 10)]),
    "C43": Case("AC AD 2C 2D", "3S", [Take("AC 2C AD 2D", "", 10)]),
}


def expected_outcomes(case: Case, preset: str) -> list[Take] | str:
    if preset == "E" and case.egyptian != SAME:
        return case.egyptian
    return case.levantine


SINGLE_PLAY_PARAMS = [
    pytest.param(case_id, preset, id=f"{case_id}-{preset}")
    for case_id, case in SINGLE_PLAYS.items()
    for preset in ("L", "E")
    if expected_outcomes(case, preset) is not None
]


def expected_moves(play: str, outcomes: list[Take] | str) -> set[Move]:
    if outcomes == LAY:
        return {Move(play, ())}
    return {
        Move(play, tuple(cards(take.capture)), take.basra is not None, take.basra or 0)
        for take in outcomes
    }


@pytest.mark.parametrize(("case_id", "preset"), SINGLE_PLAY_PARAMS)
def test_single_play_outcomes(case_id: str, preset: str) -> None:
    case = SINGLE_PLAYS[case_id]
    outcomes = expected_outcomes(case, preset)
    state = single_play(PRESET_RULES[preset], cards(case.table), [case.play])
    moves = legal_moves(state)
    assert len(moves) == len(set(moves)), "duplicate legal moves"
    assert set(moves) == expected_moves(case.play, outcomes)
    assert len(moves) == (1 if outcomes == LAY else len(outcomes))
    for move in moves:
        assert list(move.capture) == sort_cards(move.capture), "capture not in canonical order"


@pytest.mark.parametrize(("case_id", "preset"), SINGLE_PLAY_PARAMS)
def test_single_play_applied(case_id: str, preset: str) -> None:
    case = SINGLE_PLAYS[case_id]
    outcomes = expected_outcomes(case, preset)
    table = cards(case.table)
    state = single_play(PRESET_RULES[preset], table, [case.play])
    if outcomes == LAY:
        after, events = apply(state, {"card": case.play, "capture": []})
        assert after.table == (*table, case.play)
        assert after.captured == state.captured
        assert after.last_capturer == state.last_capturer
        assert [event["type"] for event in events] == ["move"]
        return
    for take in outcomes:
        after, events = apply(state, {"card": case.play, "capture": cards(take.capture)})
        assert list(after.table) == cards(take.left)
        taken = [*cards(take.capture), case.play]
        assert sorted(after.captured[0]) == sorted([*state.captured[0], *taken])
        assert after.captured[1] == state.captured[1]
        assert after.last_capturer == 0
        assert after.hands[0] == () and after.turn == 1
        capture_event = next(event for event in events if event["type"] == "capture")
        assert capture_event["cards"] == sort_cards(taken)
        basra_events = [event for event in events if event["type"] == "basra"]
        if take.basra is None:
            assert basra_events == [] and after.basras == state.basras
        else:
            assert [(e["card"], e["points"]) for e in basra_events] == [(case.play, take.basra)]
            assert after.basras[0] == ((case.play, take.basra),)


@pytest.mark.parametrize(("case_id", "preset"), SINGLE_PLAY_PARAMS)
def test_single_play_capture_may_be_omitted_only_when_unique(case_id: str, preset: str) -> None:
    case = SINGLE_PLAYS[case_id]
    outcomes = expected_outcomes(case, preset)
    state = single_play(PRESET_RULES[preset], cards(case.table), [case.play])
    if outcomes == LAY or len(outcomes) == 1:
        assert read_move(state, {"card": case.play}) == legal_moves(state)[0]
        return
    with pytest.raises(MoveError) as raised:
        read_move(state, {"card": case.play})
    assert raised.value.path == "move.capture"
    for take in outcomes:
        assert " + ".join(cards(take.capture)) in raised.value.reason
    assert sorted(raised.value.choices) == sorted(list(cards(take.capture)) for take in outcomes)


def test_c37_cannot_arise_under_egyptian_rules() -> None:
    """A lone 7D on an egyptian table is taken by the next non-jack card, so no 7D 2C."""
    state = single_play(EGYPTIAN, ["7D"], ["2C"])
    (move,) = legal_moves(state)
    assert move == Move("2C", ("7D",), True, 10)


# --- §2 of the cases: legal-move lists --------------------------------------------------


@pytest.mark.parametrize("preset", ["L", "E"])
def test_c18_capturing_is_compulsory(preset: str) -> None:
    state = single_play(PRESET_RULES[preset], ["4C", "5D"], ["9S", "KH"])
    assert sorted(legal_moves(state)) == sorted(
        [Move("9S", ("4C", "5D"), True, 10), Move("KH", ())]
    )
    with pytest.raises(MoveError):
        apply(state, {"card": "9S", "capture": []})


@pytest.mark.parametrize("preset", ["levantine", "egyptian"])
def test_c18_optional_capture_adds_the_lay(preset: str) -> None:
    state = single_play(rules_with(preset, forced_capture=False), ["4C", "5D"], ["9S", "KH"])
    assert sorted(legal_moves(state)) == sorted(
        [Move("9S", ("4C", "5D"), True, 10), Move("9S", ()), Move("KH", ())]
    )
    after, _ = apply(state, {"card": "9S", "capture": []})
    assert after.table == ("4C", "5D", "9S")


@pytest.mark.parametrize("preset", ["L", "E"])
def test_c44_two_cards_of_one_rank_are_two_moves(preset: str) -> None:
    state = single_play(PRESET_RULES[preset], ["2C", "3H"], ["5C", "5D"])
    assert sorted(legal_moves(state)) == [
        Move("5C", ("2C", "3H"), True, 10),
        Move("5D", ("2C", "3H"), True, 10),
    ]


@pytest.mark.parametrize("preset", ["L", "E"])
def test_c45_seven_of_diamonds_never_offers_a_choice(preset: str) -> None:
    state = single_play(PRESET_RULES[preset], ["4C", "3D", "9H"], ["7D"])
    assert legal_moves(state) == [Move("7D", ("4C", "3D", "9H"))]
    with pytest.raises(MoveError) as raised:
        read_move(state, {"card": "7D", "capture": ["4C", "3D"]})
    assert raised.value.path == "move.capture"


# --- §4 of the cases: end of the round ---------------------------------------------------


@pytest.mark.parametrize("preset", ["L", "E"])
def test_c39_last_capturer_takes_the_rest(preset: str) -> None:
    rules = PRESET_RULES[preset]
    state = final_play(
        rules, dealer=0, card="8H", table=cards("4C 9D KH"),
        captured=[cards("2D 3D 4D 5D"), ()], last_capturer=1, filler_side=1,
    )  # fmt: skip
    assert legal_moves(state) == [Move("8H", ())]
    pile = len(state.captured[1])
    after, events = apply(state, {"card": "8H", "capture": []})
    assert [event["type"] for event in events] == ["move", "round_end", "deal"]
    round_end = events[1]
    assert round_end["sweep"] == {"seat": 1, "side": 1, "cards": ["4C", "9D", "8H", "KH"]}
    assert round_end["sides"][1]["cards"] == pile + 4
    assert round_end["sides"][0]["cards"] == 4
    assert round_end["sides"][0]["basras"] == round_end["sides"][1]["basras"] == 0
    assert after.round == 2 and after.dealer == 1 and after.turn == 0


@pytest.mark.parametrize("preset", ["L", "E"])
def test_c39_four_players_sweep_to_the_partnership(preset: str) -> None:
    rules = PRESET_RULES[preset]
    state = final_play(
        rules, seats=4, dealer=0, card="8H", table=cards("4C 9D KH"),
        captured=[cards("2D 3D 4D 5D"), ()], last_capturer=3, filler_side=1,
    )  # fmt: skip
    _, events = apply(state, {"card": "8H"})
    round_end = next(event for event in events if event["type"] == "round_end")
    assert round_end["sweep"] == {"seat": 3, "side": 1, "cards": ["4C", "9D", "8H", "KH"]}
    assert round_end["sides"][1]["basras"] == 0


def c40_state(rules: Rules):
    """Seat 1 (dealer) plays the round's last card 5S on a lone 5H; seat 0 captured last.
    Side 1 holds the majority and 100 points, so the round ends the match either way and
    the final state keeps its piles and last capturer."""
    return final_play(
        rules, dealer=1, card="5S", table=["5H"], captured=[cards("2D 3D 4D"), ()],
        last_capturer=0, filler_side=1, scores=(0, 100),
    )  # fmt: skip


@pytest.mark.parametrize("preset", ["levantine", "egyptian"])
@pytest.mark.parametrize("counts", [True, False])
def test_c40_basra_with_the_last_card(preset: str, counts: bool) -> None:
    rules = rules_with(preset, last_card_basra_counts=counts)
    state = c40_state(rules)
    points = 10 if counts else 0
    assert legal_moves(state) == [Move("5S", ("5H",), True, points)]
    after, events = apply(state, {"card": "5S", "capture": ["5H"]})
    round_end = next(event for event in events if event["type"] == "round_end")
    assert round_end["sweep"]["seat"] == 1 and round_end["sweep"]["cards"] == []
    assert round_end["sides"][1]["basras"] == points
    assert after.last_capturer == 1
    assert {"5H", "5S"} <= set(after.captured[1])
    assert sum(p for _, p in after.basras[1]) == points
    if counts:
        assert ("5S", 10) in after.basras[1]
    assert after.status == "match_over" and after.winner == 1


@pytest.mark.parametrize("preset", ["levantine", "egyptian"])
def test_c40_last_card_basra_is_worth_exactly_its_points(preset: str) -> None:
    banked = {}
    for counts in (True, False):
        state = c40_state(rules_with(preset, last_card_basra_counts=counts))
        banked[counts] = apply(state, {"card": "5S"})[0].scores[1]
    assert banked[True] - banked[False] == 10


# --- §3 of the cases: dealing ------------------------------------------------------------


def d1_deck() -> tuple[str, ...]:
    hands = cards("AC 2C 3C 4C 5D 6D 8D TD")
    turned = cards("5C JH 9D 7D 2S KC")
    rest = [card for card in DECK if card not in hands and card not in turned]
    return (*hands, *turned, *rest)


@pytest.mark.parametrize("preset", ["L", "E"])
def test_d1_burying_a_jack_and_the_seven_of_diamonds(preset: str) -> None:
    rules = PRESET_RULES[preset]
    deck = d1_deck()
    hands, table, stock = deal_round(rules, 2, 1, deck)
    assert hands == (("AC", "3C", "5D", "8D"), ("2C", "4C", "6D", "TD"))
    assert table == ("5C", "9D", "2S", "KC")
    assert stock[0] == deck[14]
    assert stock[-2:] == ("JH", "7D")
    assert len(stock) == 40
    last_deal = deal_hands(stock[-8:], 2, 1)
    assert "JH" in last_deal[0] and "7D" in last_deal[1]


@pytest.mark.parametrize("preset", ["L", "E"])
def test_d1_buried_cards_reach_the_last_deal_in_play(preset: str) -> None:
    rules = PRESET_RULES[preset]
    hands, table, stock = deal_round(rules, 2, 1, d1_deck())
    state = build(rules, hands=hands, table=table, dealer=1, turn=0, stock=stock)
    assert state.captured == ((), ())
    deals = 0
    while state.stock:
        move = legal_moves(state)[0]
        state, events = apply(state, move)
        deals += sum(event["type"] == "deal" for event in events)
    assert deals == 5
    assert "JH" in state.hands[0] and "7D" in state.hands[1]


def test_d1_plain_seven_of_diamonds_is_not_buried() -> None:
    rules = rules_with(seven_diamonds_mode="plain")
    _, table, stock = deal_round(rules, 2, 1, d1_deck())
    assert table == ("5C", "9D", "7D", "2S")
    assert stock[-1] == "JH"


def test_d1_no_burying_without_initial_table_redeal() -> None:
    rules = rules_with(initial_table_redeal=False)
    _, table, stock = deal_round(rules, 2, 1, d1_deck())
    assert table == ("5C", "JH", "9D", "7D")
    assert stock[:2] == ("2S", "KC")


DEAL_SIZES = {
    "2x4": (2, 4, [40, 32, 24, 16, 8, 0]),
    "4x4": (4, 4, [32, 16, 0]),
    "2x6": (2, 6, [36, 24, 12, 0]),
    "4x6": (4, 6, [24, 0]),
}


@pytest.mark.parametrize(("seats", "hand_size", "stock_sizes"), DEAL_SIZES.values(),
                         ids=DEAL_SIZES.keys())  # fmt: skip
@pytest.mark.parametrize("preset", ["levantine", "egyptian"])
def test_d2_deal_sizes(preset: str, seats: int, hand_size: int, stock_sizes: list[int]) -> None:
    state = new_game(rules_with(preset, hand_size=hand_size), seats, "d2")
    assert [len(hand) for hand in state.hands] == [hand_size] * seats
    assert len(state.table) == 4
    seen = [len(state.stock)]
    while state.round == 1:
        table, move = state.table, legal_moves(state)[0]
        state, events = apply(state, move)
        for event in events:
            if event["type"] == "deal" and event["round"] == 1:
                seen.append(event["stock"])
                assert [len(hand) for hand in state.hands] == [hand_size] * seats
                assert set(state.table) <= {*table, move.card}, "a deal put a card on the table"
    assert seen == stock_sizes


def test_d3_who_leads() -> None:
    state = new_game(LEVANTINE, 4, "d3")
    assert state.dealer == 3 and state.turn == 0
    leaders = []
    while state.round == 1:
        state, events = apply(state, legal_moves(state)[0])
        if any(e["type"] == "deal" and e["round"] == 1 for e in events):
            leaders.append(state.turn)
    assert leaders == [0, 0]
    assert state.round == 2 and state.dealer == 0 and state.turn == 1


# --- §4 of the cases: scoring ------------------------------------------------------------

SCORING_CARDS = [card for card in DECK if card[0] in "JA" or card in ("2C", "TD")]
PLAIN = [card for card in DECK if card not in SCORING_CARDS]


def plain_cards(count: int, *, avoid: str = "") -> list[str]:
    """`count` cards worth no card points, none of `avoid`."""
    return [card for card in PLAIN if card not in cards(avoid)][:count]


def s1_piles(side0_size: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """S1: side 0 has JC JD JH AC AS 2C and the basra cards 5S QH, side 1 JS AD AH TD and
    the basra card 4C; the remaining plain cards fill side 0 to `side0_size`."""
    side0 = cards("JC JD JH AC AS 2C 5S QH")
    side0 += plain_cards(side0_size - len(side0), avoid="5S QH 4C")
    side1 = [card for card in DECK if card not in side0]
    return tuple(side0), tuple(side1)


S1_BASRAS = ((("5S", 10), ("QH", 10)), (("4C", 10),))
ITEMS = ("cards", "majority", "jacks", "aces", "two_clubs", "ten_diamonds", "basras", "total")


def row(*values: int) -> dict[str, int]:
    return dict(zip(ITEMS, values, strict=True))


def test_s1_normal_round_levantine() -> None:
    sides, carry = final_breakdown(s1_piles(28), S1_BASRAS, 0, LEVANTINE)
    assert sides == [row(28, 30, 3, 2, 2, 0, 20, 57), row(24, 0, 1, 2, 0, 3, 10, 16)]
    assert carry == 0
    card_items = sum(s[k] for s in sides for k in ("jacks", "aces", "two_clubs", "ten_diamonds"))
    assert card_items == 13


def test_s1_normal_round_egyptian() -> None:
    sides, carry = final_breakdown(s1_piles(28), S1_BASRAS, 0, EGYPTIAN)
    assert sides == [row(28, 30, 0, 0, 0, 0, 20, 50), row(24, 0, 0, 0, 0, 0, 10, 10)]
    assert carry == 0


@pytest.mark.parametrize(
    ("preset", "totals"), [("L", [57, 16]), ("E", [50, 10])]
)  # fmt: skip
def test_s1_played_out_state_is_scored_as_a_finished_round(preset: str, totals: list) -> None:
    """Hands and stock empty, still `playing`: `score` sweeps the table and scores it."""
    piles = s1_piles(28)
    leftovers = ["6C", "7C"]
    assert set(leftovers) <= set(piles[0])
    state = build(
        PRESET_RULES[preset], hands=[(), ()], dealer=1, turn=0, table=leftovers,
        captured=[[c for c in piles[0] if c not in leftovers], piles[1]], basras=S1_BASRAS,
        last_capturer=0,
    )  # fmt: skip
    assert [side["total"] for side in score(state)] == totals
    assert score(state)[0]["cards"] == 28


def test_s2_tie_levantine_voids_the_round_and_carries() -> None:
    sides, carry = final_breakdown(s1_piles(26), S1_BASRAS, 0, LEVANTINE)
    assert sides == [row(26, 0, 0, 0, 0, 0, 0, 0), row(26, 0, 0, 0, 0, 0, 0, 0)]
    assert carry == 30
    sides, carry = final_breakdown(s1_piles(28), S1_BASRAS, 30, LEVANTINE)
    assert sides[0] == row(28, 60, 3, 2, 2, 0, 20, 87)
    assert carry == 0


def test_s2_tie_egyptian_gives_the_majority_to_nobody() -> None:
    sides, carry = final_breakdown(s1_piles(26), S1_BASRAS, 0, EGYPTIAN)
    assert [side["total"] for side in sides] == [20, 10]
    assert [side["majority"] for side in sides] == [0, 0]
    assert carry == 0


def test_s2_tie_policy_carry_banks_the_rest() -> None:
    sides, carry = final_breakdown(s1_piles(26), S1_BASRAS, 0, rules_with(tie_policy="carry"))
    assert sides == [row(26, 0, 3, 2, 2, 0, 20, 27), row(26, 0, 1, 2, 0, 3, 10, 16)]
    assert carry == 30


def test_s3_ties_in_a_row() -> None:
    tie = s1_piles(26)
    _, carry = final_breakdown(tie, S1_BASRAS, 0, LEVANTINE)
    assert carry == 30
    _, carry = final_breakdown(tie, S1_BASRAS, carry, LEVANTINE)
    assert carry == 60
    side1 = tuple(plain_cards(29))
    piles = (tuple(c for c in DECK if c not in side1), side1)
    sides, carry = final_breakdown(piles, ((), ()), carry, LEVANTINE)
    assert sides[1]["majority"] == 90 and sides[0]["majority"] == 0
    assert carry == 0


def test_s3_ties_in_a_row_through_whole_rounds() -> None:
    tie = tuple(plain_cards(26))
    piles = (tuple(c for c in DECK if c not in tie), tie)
    after, events = end_of(finishing_state(LEVANTINE, piles, scores=(40, 50), carry=30))
    assert events["round_end"]["carry"] == 60
    assert (after.carry, after.scores, after.round, after.dealer) == (60, (40, 50), 2, 0)
    side1 = tuple(plain_cards(29))
    piles = (tuple(c for c in DECK if c not in side1), side1)
    state = finishing_state(LEVANTINE, piles, scores=(40, 50), carry=60, round_number=3)
    after, events = end_of(state)
    assert events["round_end"]["sides"][1]["majority"] == 90
    assert after.carry == 0 and after.scores == (53, 140) and after.status == "match_over"


def finishing_state(rules: Rules, piles, basras=((), ()), **fields):
    """One move before the end of a round whose final piles are `piles`: the dealer (seat 1)
    lays a plain card from side 1's final pile on an empty table and the sweep brings it
    back to side 1, the last capturer."""
    basra_cards = {card for side in basras for card, _ in side}
    last = next(c for c in reversed(piles[1]) if c in PLAIN and c != "7D" and c not in basra_cards)
    captured = [piles[0], [card for card in piles[1] if card != last]]
    return final_play(
        rules, dealer=1, card=last, captured=captured, last_capturer=1, basras=basras, **fields
    )


def round_worth_30_and_13() -> tuple[tuple[str, ...], tuple[str, ...]]:
    side0 = tuple(plain_cards(27))
    return side0, tuple(card for card in DECK if card not in side0)


def end_of(state):
    after, events = apply(state, legal_moves(state)[0])
    return after, {event["type"]: event for event in events}


def test_s4_both_reach_the_target_higher_wins() -> None:
    state = finishing_state(LEVANTINE, round_worth_30_and_13(), scores=(100, 110),
                            round_number=3)  # fmt: skip
    after, events = end_of(state)
    assert [side["total"] for side in events["round_end"]["sides"]] == [30, 13]
    assert after.scores == (130, 123)
    assert events["match_end"] == {"type": "match_end", "winner": 0, "scores": [130, 123]}
    assert "deal" not in events
    assert (after.status, after.winner, after.turn, after.round) == ("match_over", 0, None, 3)


def test_s4_tie_at_the_top_plays_another_round() -> None:
    # 14 / 7 cannot be a levantine round (one side always takes 30 or more); side 0 takes
    # the 30, side 1 every card point and one basra: 111 / 118 become 141 / 141.
    side1 = (*SCORING_CARDS, "5S", *plain_cards(5, avoid="5S"))
    piles = (tuple(c for c in DECK if c not in side1), side1)
    state = finishing_state(LEVANTINE, piles, basras=((), (("5S", 10),)), scores=(111, 118),
                            round_number=2)  # fmt: skip
    after, events = end_of(state)
    assert [side["total"] for side in events["round_end"]["sides"]] == [30, 23]
    assert after.scores == (141, 141)
    assert "match_end" not in events
    assert (after.status, after.winner, after.round, after.dealer, after.turn) == (
        "playing", None, 3, 0, 1)  # fmt: skip
    assert match_winner((125, 125), LEVANTINE, 1, 0) is None


def tie_round_with_a_basra_for_side_0() -> tuple[tuple[str, ...], tuple[str, ...]]:
    side0 = tuple(plain_cards(26))
    assert "5H" in side0
    return side0, tuple(card for card in DECK if card not in side0)


def test_s4_void_round_never_ends_the_match() -> None:
    state = finishing_state(LEVANTINE, tie_round_with_a_basra_for_side_0(), scores=(118, 90))
    after, events = end_of(state)
    assert after.scores == (118, 90) and after.carry == 30
    assert events["round_end"]["carry"] == 30
    assert "match_end" not in events
    assert (after.status, after.round, after.dealer, after.turn) == ("playing", 2, 0, 1)
    assert [len(hand) for hand in after.hands] == [4, 4]
    assert len(after.table) == 4 and len(after.stock) == 40
    assert after.captured == ((), ()) and after.basras == ((), ()) and after.last_capturer is None


def test_s5_egyptian_tie_still_banks_the_basra() -> None:
    piles = tie_round_with_a_basra_for_side_0()
    state = finishing_state(EGYPTIAN, piles, basras=((("5H", 10),), ()), scores=(95, 80))
    after, events = end_of(state)
    assert after.scores == (105, 80)
    assert (after.status, after.winner, after.turn) == ("match_over", 0, None)
    assert events["match_end"]["winner"] == 0


def test_s5_the_same_round_is_void_under_levantine_rules() -> None:
    piles = tie_round_with_a_basra_for_side_0()
    state = finishing_state(LEVANTINE, piles, basras=((("5H", 10),), ()), scores=(95, 80))
    after, _ = end_of(state)
    assert after.scores == (95, 80) and after.carry == 30 and after.status == "playing"


@pytest.mark.parametrize("preset", ["L", "E"])
def test_s6_four_players_sweep_to_the_last_capturers_side(preset: str) -> None:
    rules = PRESET_RULES[preset]
    side0 = plain_cards(23, avoid="5S 5H 6C TH")
    state = final_play(
        rules, seats=4, dealer=2, card="5S", table=cards("6C TH 5H"), captured=[side0, ()],
        last_capturer=1, filler_side=1,
    )  # fmt: skip
    assert len(state.captured[1]) == 25
    after, events = end_of(state)
    round_end = events["round_end"]
    assert round_end["sweep"] == {"seat": 2, "side": 0, "cards": ["6C", "TH"]}
    assert round_end["sides"][0]["cards"] == 27 and round_end["sides"][1]["cards"] == 25
    assert round_end["sides"][0]["majority"] == 30 and round_end["sides"][1]["majority"] == 0
    assert after.dealer == 3 and after.turn == 0 and after.round == 2


@pytest.mark.parametrize("preset", ["L", "E"])
def test_s6_sweep_goes_to_the_partnership_not_the_mover(preset: str) -> None:
    state = final_play(
        PRESET_RULES[preset], seats=4, dealer=3, card="KS", table=cards("6C TH"),
        captured=[plain_cards(23, avoid="KS 6C TH"), ()], last_capturer=2, filler_side=1,
    )  # fmt: skip
    _, events = end_of(state)
    assert events["round_end"]["sweep"] == {"seat": 2, "side": 0, "cards": ["6C", "TH", "KS"]}
    assert events["round_end"]["sides"][0]["cards"] == 26


# --- the contract's `score` ---------------------------------------------------------------


def mid_round(rules: Rules, side0: list[str], carry: int = 0):
    """Seat 0 to lead with one card each and a deal waiting; side 0 holds `side0`."""
    return build(rules, hands=[["KC"], ["KD"]], table=["QC"], dealer=1, turn=0, stock_size=8,
                 captured=[side0, ()], filler_side=1, carry=carry)  # fmt: skip


def test_score_mid_round_majority_only_from_27_cards_with_carry() -> None:
    side0 = [*cards("JC AC 2C TD"), *plain_cards(23, avoid="KC KD QC")]
    sides = score(mid_round(LEVANTINE, side0, carry=30))
    assert sides[0] == row(27, 60, 1, 1, 2, 3, 0, 67)
    assert sides[1]["majority"] == 0


def test_score_mid_round_below_27_has_no_majority_and_no_tie_policy() -> None:
    side0 = [*cards("JC AC 2C TD"), *plain_cards(22, avoid="KC KD QC")]
    state = mid_round(LEVANTINE, side0, carry=30)
    assert score(state) == running_breakdown(state.captured, state.basras, 30, LEVANTINE)
    assert score(state)[0] == row(26, 0, 1, 1, 2, 3, 0, 7)
    assert score(state)[1]["majority"] == 0 and score(state)[1]["cards"] == 15


def test_score_of_a_played_out_tie_applies_the_tie_policy() -> None:
    side0 = plain_cards(24)
    state = build(LEVANTINE, hands=[(), ()], dealer=1, turn=0, table=cards("AS 2C"),
                  captured=[side0, ()], filler_side=1, last_capturer=0)  # fmt: skip
    assert [side["cards"] for side in score(state)] == [26, 26]
    assert [side["total"] for side in score(state)] == [0, 0]
    egyptian = state._replace(rules=EGYPTIAN)
    assert [side["total"] for side in score(egyptian)] == [0, 0]
    card_rules = state._replace(rules=rules_with(tie_policy="none"))
    assert [side["total"] for side in score(card_rules)] == [3, 10]


def test_a_match_decided_by_a_round_without_captures_reads_back() -> None:
    """With optional capture every card may be laid; the table then goes to the dealer's
    side (§7.3) and the finished match is still a state the engine accepts."""
    state = new_game(rules_with(forced_capture=False, target_score=1), 2, "no captures")
    while state.status == "playing":
        state, events = apply(state, next(m for m in legal_moves(state) if not m.capture))
    round_end = next(event for event in events if event["type"] == "round_end")
    assert round_end["sweep"]["seat"] == 1 and round_end["sides"][1]["cards"] == 52
    assert state.last_capturer is None and state.winner == 1
    assert State.from_json(state.to_json()).to_json() == state.to_json()
