"""Basra against a second, deliberately plain model of basra-rules.md.

The model below is written from the spec's sentences alone (§3 deal, §4-§5 outcomes, §6
basras, §7 end of round, §8 scoring, §9 match end, §10 partnerships), by brute force and
without the engine's search, caches or fast paths. The engine must agree with it on:

* every position a generated state can hold: the served listing (`legal_moves`, which
  goes through the hand-level fast path, not `card_moves`), and `read_move` accepting
  exactly the listed captures, in any order, and an omitted capture exactly when the card
  has one outcome;
* every step of whole matches in both presets, 2 and 4 seats, with option overrides: the
  state after each move, and each round's breakdown.

Only the shuffle of each round's pack is taken from the engine: how the pack is shuffled
is the project's choice (contract: the same seed gives the same state), what happens to
the shuffled pack is the spec's.
"""

import copy
import random
from itertools import combinations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.basra import MoveError, Rules, State, apply, legal_moves, new_game, read_move
from engine.basra.cards import DECK
from engine.basra.play import shuffled_deck
from engine.cards import sort_cards
from tests.engine.builders import final_play, single_play, state_json

RANKS = "A23456789TJQK"
ITEMS = ("majority", "jacks", "aces", "two_clubs", "ten_diamonds", "basras")

# --- the model ------------------------------------------------------------------------------


def value(card: str) -> int:
    """§1.2-1.3: A 1 ... T 10; J, Q, K none."""
    return 0 if card[0] in "JQK" else RANKS.index(card[0]) + 1


def special_seven(rules: dict[str, Any]) -> bool:
    return rules["seven_diamonds_mode"] != "plain"


def lone_wild_seven(table: list[str], rules: dict[str, Any]) -> bool:
    return rules["table_seven_diamonds"] == "lone_wild" and table == ["7D"]


def every_cover(target: int, table: list[str]) -> set[frozenset[str]]:
    """§5.1: the union of each family of pairwise-disjoint groups of table numerals summing
    to `target`, every subset of the table tried as a group."""
    numerals = [card for card in table if value(card)]
    groups = [
        frozenset(group)
        for size in range(1, len(numerals) + 1)
        for group in combinations(numerals, size)
        if sum(map(value, group)) == target
    ]
    found = {frozenset()}
    for group in groups:
        found |= {cover | group for cover in found if not cover & group}
    return found - {frozenset()}


def outcomes(card: str, table: list[str], rules: dict[str, Any]) -> list[frozenset[str]]:
    """§5: the non-empty capture sets of `card` on `table`."""
    if not table:
        return []
    if lone_wild_seven(table, rules) and card[0] != "J":  # §5.5
        return [frozenset(table)]
    if card[0] == "J" or (card == "7D" and special_seven(rules)):  # §5.3, §5.4
        return [frozenset(table)]
    if card[0] in "QK":  # §5.2
        same = frozenset(other for other in table if other[0] == card[0])
        return [same] if same else []
    covers = every_cover(value(card), table)
    if rules["capture_policy"] == "any_family" or not covers:
        return list(covers)
    most = max(map(len, covers))
    return [cover for cover in covers if len(cover) == most]


def wild_seven_clears(table: list[str]) -> bool:
    """§6.3 wild: some rank A..T, Q or K has an outcome covering the whole table."""
    if all(card[0] == "Q" for card in table) or all(card[0] == "K" for card in table):
        return True
    whole = frozenset(table)
    return all(map(value, table)) and any(whole in every_cover(v, table) for v in range(1, 11))


def basra(card: str, table: list[str], capture: frozenset[str], rules: dict[str, Any]):
    """§6.1-6.4: the points of the basra a capture makes, None when it is none."""
    lone_jack = len(table) == 1 and table[0][0] == "J" and rules["jack_basra_points"] > 0
    if lone_wild_seven(table, rules) and card[0] != "J":
        return rules["basra_points"]
    if card[0] == "J":
        return rules["jack_basra_points"] if lone_jack else None
    if card == "7D" and rules["seven_diamonds_mode"] == "sweep":
        small = sum(map(value, table)) <= rules["seven_diamonds_basra_max_sum"]
        return rules["basra_points"] if all(map(value, table)) and small else None
    if card == "7D" and rules["seven_diamonds_mode"] == "wild":
        if lone_jack:
            return rules["jack_basra_points"]
        return rules["basra_points"] if wild_seven_clears(table) else None
    return rules["basra_points"] if len(capture) == len(table) else None


def is_last_card(state: dict[str, Any]) -> bool:
    return not state["stock"] and sum(map(len, state["hands"])) == 1


def model_move(card: str, capture: frozenset[str], state: dict[str, Any]) -> tuple:
    rules, table = state["rules"], state["table"]
    points = basra(card, table, capture, rules) if capture else None
    if points is not None and is_last_card(state) and not rules["last_card_basra_counts"]:
        points = 0  # §6.5
    return card, tuple(sort_cards(capture)), points is not None, points or 0


def model_moves(state: dict[str, Any]) -> set[tuple]:
    """§4.4-4.5: every outcome of every card in hand; a lay only when the card takes
    nothing or capture is optional."""
    rules = state["rules"]
    moves = set()
    for card in state["hands"][state["turn"]]:
        found = outcomes(card, state["table"], rules)
        moves |= {model_move(card, capture, state) for capture in found}
        if not found or not rules["forced_capture"]:
            moves.add((card, (), False, 0))
    return moves


def deal_hands(cards: list[str], seats: int, dealer: int) -> list[list[str]]:
    """§3.1: one card at a time from the seat after the dealer round to the dealer."""
    hands: list[list[str]] = [[] for _ in range(seats)]
    for index, card in enumerate(cards):
        hands[(dealer + 1 + index) % seats].append(card)
    return [sort_cards(hand) for hand in hands]


def deal_round(rules: dict[str, Any], seats: int, dealer: int, pack: tuple[str, ...]):
    """§3: hands first, then the table turned up from the top, a J (and a special 7D)
    buried at the bottom of the stock when `initial_table_redeal` is on."""
    dealt = rules["hand_size"] * seats
    rest, table = list(pack[dealt:]), []
    while len(table) < 4:
        card = rest.pop(0)
        buried = card[0] == "J" or (card == "7D" and special_seven(rules))
        if rules["initial_table_redeal"] and buried:
            rest.append(card)
        else:
            table.append(card)
    return deal_hands(list(pack[:dealt]), seats, dealer), table, rest


def breakdown(piles, basras, carry: int, rules: dict[str, Any]) -> tuple[list[dict], int]:
    """§8: each side's items and the carry left for the next round."""
    sizes = [len(pile) for pile in piles]
    most = max(sizes)
    leader = [sizes.index(most)] if sizes.count(most) == 1 else []  # strictly more (§8)
    if not leader and rules["tie_policy"] == "void_round_carry":
        void = [{"cards": size, **dict.fromkeys(ITEMS, 0), "total": 0} for size in sizes]
        return void, carry + rules["majority_points"]
    sides = []
    for side, pile in enumerate(piles):
        on = rules["card_points"]
        items = {
            "majority": rules["majority_points"] + carry if [side] == leader else 0,
            "jacks": sum(card[0] == "J" for card in pile) if on else 0,
            "aces": sum(card[0] == "A" for card in pile) if on else 0,
            "two_clubs": 2 if on and "2C" in pile else 0,
            "ten_diamonds": 3 if on and "TD" in pile else 0,
            "basras": sum(record["points"] for record in basras[side]),
        }
        sides.append({"cards": len(pile), **items, "total": sum(items.values())})
    if leader:
        return sides, 0
    return sides, carry + rules["majority_points"] if rules["tie_policy"] == "carry" else carry


def model_apply(state: dict[str, Any], card: str, capture: tuple[str, ...], seed: str):
    """§4.2-4.6, §6.7, §7, §9 and the next round's deal: the state after the move, and the
    round's breakdown when the move ended a round (else None)."""
    state = copy.deepcopy(state)
    rules, seats, seat = state["rules"], state["seats"], state["turn"]
    points = model_move(card, frozenset(capture), state)[3]
    made = bool(capture) and basra(card, state["table"], frozenset(capture), rules) is not None
    state["hands"][seat].remove(card)
    side = seat % 2
    if capture:
        state["table"] = [other for other in state["table"] if other not in capture]
        state["captured"][side] = sort_cards([*state["captured"][side], *capture, card])
        state["last_capturer"] = seat
        if made:
            state["basras"][side].append({"card": card, "points": points})
    else:
        state["table"].append(card)
    state["turn"] = (seat + 1) % seats
    if any(state["hands"]):
        return state, None
    if state["stock"]:  # §3.4
        dealt = rules["hand_size"] * seats
        state["hands"] = deal_hands(state["stock"][:dealt], seats, state["dealer"])
        state["stock"] = state["stock"][dealt:]
        state["turn"] = (state["dealer"] + 1) % seats
        return state, None
    taker = state["dealer"] if state["last_capturer"] is None else state["last_capturer"]
    swept = taker % 2  # §7.2: the rest to the last capturer's side
    state["captured"][swept] = sort_cards([*state["captured"][swept], *state["table"]])
    state["table"] = []
    sides, state["carry"] = breakdown(state["captured"], state["basras"], state["carry"], rules)
    state["scores"] = [banked + side["total"] for banked, side in zip(state["scores"], sides)]
    best = max(state["scores"])
    if best >= rules["target_score"] and state["scores"].count(best) == 1:  # §9.2
        state.update(status="match_over", winner=state["scores"].index(best), turn=None)
        return state, sides
    dealer = (state["dealer"] + 1) % seats  # §2.3, even after a void round
    number = state["round"] + 1
    hands, table, stock = deal_round(rules, seats, dealer, shuffled_deck(seed, number))
    state.update(
        dealer=dealer, turn=(dealer + 1) % seats, hands=hands, table=table, stock=stock,
        captured=[[], []], basras=[[], []], last_capturer=None, round=number,
    )  # fmt: skip
    return state, sides


# --- generated rules --------------------------------------------------------------------

OVERRIDES: dict[str, st.SearchStrategy] = {
    "hand_size": st.sampled_from([4, 6]),
    "initial_table_redeal": st.booleans(),
    "forced_capture": st.booleans(),
    "seven_diamonds_mode": st.sampled_from(["sweep", "wild", "plain"]),
    "seven_diamonds_basra_max_sum": st.integers(1, 25),
    "table_seven_diamonds": st.sampled_from(["plain", "lone_wild"]),
    "basra_points": st.integers(0, 20),
    "jack_basra_points": st.integers(0, 30),
    "last_card_basra_counts": st.booleans(),
    "majority_points": st.integers(10, 40),  # a match must be able to end
    "card_points": st.booleans(),
    "tie_policy": st.sampled_from(["void_round_carry", "carry", "none"]),
    "target_score": st.integers(1, 160),
}
# Only for single positions: under `any_family` a whole match's table can grow until the
# listing is refused as too large (engine/basra/moves.py, TooManyMoves).
POLICY = {"capture_policy": st.sampled_from(["max_cards", "any_family"])}
presets = st.sampled_from(["levantine", "egyptian"])


def resolved(preset: str, overrides: dict[str, Any]) -> Rules:
    return Rules.from_json({"preset": preset, **overrides})


def listed(state: State) -> set[tuple]:
    return {tuple(move) for move in legal_moves(state)}


# --- positions --------------------------------------------------------------------------

NUMERALS = [card for card in DECK if value(card)]
FACES = [card for card in DECK if not value(card)]
LONE_TABLES = [["7D"], ["JC"], ["QD"], ["KS", "KH"], ["QC", "QH", "QS"]]
tables = st.one_of(
    st.tuples(
        st.lists(st.sampled_from(NUMERALS), unique=True, max_size=9),
        st.lists(st.sampled_from(FACES), unique=True, max_size=3),
    ).flatmap(lambda parts: st.permutations(parts[0] + parts[1])),
    st.sampled_from(LONE_TABLES),
)


@st.composite
def positions(draw) -> dict[str, Any]:
    """A state's JSON: seat 0 to move on a generated table holding a generated hand,
    sometimes the round's very last card."""
    overrides = draw(st.fixed_dictionaries({}, optional={**OVERRIDES, **POLICY}))
    rules = resolved(draw(presets), overrides)
    table = list(draw(tables))
    rest = [card for card in DECK if card not in table]
    # The 7D and jacks are worth having in hand often: they are where the presets differ.
    favoured = [card for card in ("7D", "JD", "QH", "KC") if card in rest]
    hand = draw(st.lists(st.sampled_from(rest), min_size=1, max_size=4, unique=True))
    if draw(st.booleans()):
        lead = draw(st.sampled_from(favoured))
        hand = [lead, *(card for card in hand if card != lead)][:4]
    if draw(st.booleans()):  # the round's very last card (§6.5)
        return state_json(rules, hands=[hand[:1], []], table=table, dealer=0, turn=0)
    others = [card for card in reversed(rest) if card not in hand][: len(hand)]
    hands = [hand, others]
    return state_json(rules, hands=hands, table=table, dealer=1, turn=0, stock_size=2 * 12)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(), st.randoms(use_true_random=False))
def test_every_position_lists_exactly_the_models_moves(data: dict[str, Any], rng) -> None:
    state = State.from_json(data)
    expected = model_moves(data)
    assert listed(state) == expected, f"{data['hands'][0]} on {data['table']}"
    for card, capture, made, points in expected:
        shuffled = rng.sample(capture, len(capture))  # any order on input
        move = read_move(state, {"card": card, "capture": shuffled})
        assert tuple(move) == (card, capture, made, points)
    for card in data["hands"][0]:
        options = [move for move in expected if move[0] == card]
        try:
            move = read_move(state, {"card": card})
        except MoveError:
            assert len(options) > 1, f"{card}: its one outcome must be readable unnamed"
        else:
            assert [tuple(move)] == options, f"{card}: capture omitted with several outcomes"
        # A capture that is no outcome of the card is refused, however it is named.
        for size in range(len(data["table"]) + 1):
            capture = tuple(sort_cards(rng.sample(data["table"], size)))
            if not any(option[1] == capture for option in options):
                try:
                    read_move(state, {"card": card, "capture": list(capture)})
                except MoveError:
                    continue
                raise AssertionError(f"{card} taking {capture} on {data['table']} accepted")


# --- whole matches -----------------------------------------------------------------------


def written(state: State) -> dict[str, Any]:
    data = state.to_json()
    data["captured"] = [sort_cards(pile) for pile in data["captured"]]
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    presets,
    st.sampled_from([2, 4]),
    st.fixed_dictionaries({}, optional=OVERRIDES),
    st.text(alphabet="0123456789abcdef", min_size=4, max_size=12),
    st.integers(0, 2**32 - 1),
)
def test_whole_matches_follow_the_model_step_by_step(
    preset: str, seats: int, overrides: dict[str, Any], seed: str, mover: int
) -> None:
    rules = resolved(preset, overrides)
    state = new_game(rules, seats, seed)
    model = written(state)
    hands, table, stock = deal_round(model["rules"], seats, seats - 1, shuffled_deck(seed, 1))
    assert (model["dealer"], model["turn"]) == (seats - 1, 0)  # §2.3
    assert (model["hands"], model["table"], model["stock"]) == (hands, table, stock)
    rng = random.Random(mover)
    for _ in range(20_000):
        if state.status == "match_over":
            break
        moves = listed(state)
        assert moves == model_moves(model), f"{model['hands'][model['turn']]} on {model['table']}"
        card, capture, _, _ = rng.choice(sorted(moves))
        state, events = apply(state, {"card": card, "capture": list(capture)})
        model, sides = model_apply(model, card, capture, seed)
        assert written(state) == model
        ends = [event for event in events if event["type"] == "round_end"]
        assert [event["sides"] for event in ends] == ([sides] if sides else [])
        if ends:
            assert ends[0]["carry"] == model["carry"]
    assert state.status == "match_over"


# --- round ends and match ends -----------------------------------------------------------

END_OVERRIDES = {
    key: OVERRIDES[key]
    for key in ("majority_points", "card_points", "tie_policy", "target_score", "basra_points")
}


@st.composite
def round_ends(draw) -> dict[str, Any]:
    """The round's last card (a KS laid on a table it cannot take) with generated piles,
    basras, banked scores near the target and a carry: what §7-§9 decide."""
    rules = resolved(draw(presets), draw(st.fixed_dictionaries({}, optional=END_OVERRIDES)))
    seats = draw(st.sampled_from([2, 4]))
    dealer = draw(st.integers(0, seats - 1))
    table = draw(st.sampled_from([[], ["QC"], ["QC", "JH", "5D"]]))
    rest = draw(st.permutations([card for card in DECK if card != "KS" and card not in table]))
    cut = draw(st.integers(18, len(rest) - 18))
    piles = [list(rest[:cut]), list(rest[cut:])]
    basras = [
        [(card, draw(st.integers(0, 30))) for card in draw(st.lists(st.sampled_from(pile),
                                                                    unique=True, max_size=3))]
        for pile in piles
    ]  # fmt: skip
    last = draw(st.integers(0, seats - 1))
    carry = draw(st.sampled_from([0, 0, 30, 60]))
    # Banked scores: often such that the round's totals bring both sides level, at or
    # beyond the target or just below it (§9.2: a tie at the top plays on).
    swept = [list(pile) for pile in piles]
    swept[last % 2] += [*table, "KS"]
    records = [[{"card": card, "points": points} for card, points in side] for side in basras]
    totals = [side["total"] for side in breakdown(swept, records, carry, rules.to_json())[0]]
    target = rules.target_score
    if draw(st.booleans()):
        low = max(*totals, target - 3)
        level = draw(st.integers(low, max(*totals, target) + 3))
        scores = tuple(level - total for total in totals)
    else:
        first = draw(st.integers(max(0, target - 70), target + 10))
        scores = (first, max(0, first + draw(st.sampled_from([0, 5, -13, 30]))))
    state = final_play(
        rules, seats=seats, dealer=dealer, card="KS", table=table, captured=piles,
        last_capturer=last, basras=basras, scores=scores,
        carry=carry, round_number=draw(st.integers(1, 9)),
    )  # fmt: skip
    return state.to_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(round_ends())
def test_round_and_match_ends_follow_the_model(data: dict[str, Any]) -> None:
    state = State.from_json(data)
    after, events = apply(state, {"card": "KS", "capture": []})
    model, sides = model_apply(data, "KS", (), data["seed"])
    assert written(after) == model
    ends = [event for event in events if event["type"] == "round_end"]
    assert [event["sides"] for event in ends] == [sides]
    assert ends[0]["carry"] == model["carry"] and ends[0]["scores"] == model["scores"]
    taker = data["last_capturer"]
    assert ends[0]["sweep"] == {"seat": taker, "side": taker % 2,
                                "cards": sort_cards([*data["table"], "KS"])}  # fmt: skip
    over = [event for event in events if event["type"] == "match_end"]
    assert over == ([{"type": "match_end", "winner": model["winner"], "scores": model["scores"]}]
                    if model["status"] == "match_over" else [])  # fmt: skip


# --- the last card of the round (§6.5) ---------------------------------------------------

# Every kind of basra (§6.1-6.4) made by the round's last card: preset, table, card, points.
LAST_CARD_BASRAS = {
    "numeral": ("levantine", ["5H"], "5S", 10),
    "queen": ("levantine", ["QD"], "QS", 10),
    "jack on a lone jack": ("egyptian", ["JC"], "JD", 20),
    "sweeping 7D": ("levantine", ["2C", "3H"], "7D", 10),
    "wild 7D": ("egyptian", ["6C", "6H"], "7D", 10),
    "wild 7D on a lone jack": ("egyptian", ["JS"], "7D", 20),
    "lone 7D taken": ("egyptian", ["7D"], "3C", 10),
}


@pytest.mark.parametrize("counts", [True, False])
@pytest.mark.parametrize(
    ("preset", "table", "card", "points"), LAST_CARD_BASRAS.values(), ids=LAST_CARD_BASRAS
)
def test_a_basra_with_the_last_card_scores_only_when_the_option_says_so(
    preset: str, table: list[str], card: str, points: int, counts: bool
) -> None:
    """§6.5: with last_card_basra_counts false the last card's basra scores nothing, the
    capture itself still happens and still sets last_capturer; the same capture before the
    last card scores in full."""
    rules = resolved(preset, {"last_card_basra_counts": counts})
    state = final_play(
        rules, dealer=1, card=card, table=table, captured=[["2D", "3D"], []], last_capturer=0,
    )  # fmt: skip
    scored = points if counts else 0
    capture = tuple(sort_cards(table))
    assert listed(state) == {(card, capture, True, scored)}
    _, events = apply(state, {"card": card, "capture": list(capture)})
    kinds = {event["type"]: event for event in events}
    assert kinds["basra"]["points"] == scored
    assert kinds["round_end"]["sides"][1]["basras"] == scored
    assert kinds["round_end"]["sweep"] == {"seat": 1, "side": 1, "cards": []}
    earlier = single_play(rules, table, [card])
    assert listed(earlier) == {(card, capture, True, points)}
