"""Properties of the engine over random seeds, seat counts, presets and rule overrides,
played by a uniform-random mover, and a brute-force oracle for the sum captures (§5.1)."""

import json
import random
from collections import Counter
from itertools import combinations
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.basra import (
    MoveError,
    Rules,
    State,
    apply,
    legal_moves,
    new_game,
    read_move,
    score,
    view,
)
from engine.basra.cards import DECK, VALUE
from engine.basra.moves import Move, canonical, card_moves
from engine.cards import sort_cards
from tests.engine.builders import rules_with

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MOVE_LIMIT = 20_000  # far beyond any match these rules allow; reaching it means a loop

OPTION_VALUES: dict[str, st.SearchStrategy] = {
    "hand_size": st.sampled_from([4, 6]),
    "initial_table_redeal": st.booleans(),
    "forced_capture": st.booleans(),
    "capture_policy": st.sampled_from(["max_cards", "any_family"]),
    "seven_diamonds_mode": st.sampled_from(["sweep", "wild", "plain"]),
    "seven_diamonds_basra_max_sum": st.integers(1, 40),
    "table_seven_diamonds": st.sampled_from(["plain", "lone_wild"]),
    "basra_points": st.integers(0, 20),
    "jack_basra_points": st.integers(0, 30),
    "last_card_basra_counts": st.booleans(),
    "majority_points": st.integers(10, 40),  # a match must be able to end
    "card_points": st.booleans(),
    "tie_policy": st.sampled_from(["void_round_carry", "carry", "none"]),
    "target_score": st.integers(1, 160),
}


@st.composite
def games(draw) -> State:
    preset = draw(st.sampled_from(["levantine", "egyptian"]))
    overrides = draw(st.fixed_dictionaries({}, optional=OPTION_VALUES))
    seats = draw(st.sampled_from([2, 4]))
    seed = "seed-" + draw(st.text(alphabet="0123456789abcdef", min_size=8, max_size=16))
    return new_game(Rules.from_json({"preset": preset, **overrides}), seats, seed)


class Mover(random.Random):
    """A seeded random player; with `lay_bias` it prefers laying a card while the table is
    small, which reaches rounds with few captures under optional capture. (A large table
    under `any_family` has millions of legal moves, which is the rule, not a test case.)"""

    def __init__(self, seed: int, lay_bias: float) -> None:
        super().__init__(seed)
        self.lay_bias = lay_bias

    def pick(self, state: State) -> Move:
        moves = legal_moves(state)
        lays = [move for move in moves if not move.capture]
        if lays and len(state.table) < 10 and self.random() < self.lay_bias:
            return self.choice(lays)
        return self.choice(moves)


movers = st.builds(Mover, st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.0, 0.9]))


def every_card_once(state: State) -> bool:
    places = [*state.hands, state.table, state.stock, *state.captured]
    return Counter(card for place in places for card in place) == Counter(DECK)


def round_trip(state: State) -> None:
    data = state.to_json()
    text = json.dumps(data)
    assert State.from_json(json.loads(text)).to_json() == data


def check_round_end(event: dict[str, Any], before: State, recorded: list[int]) -> None:
    """§8 at a round end: `before` is the state before the round's last move, `recorded`
    the basra points each side recorded during the round."""
    rules, sides = before.rules, event["sides"]
    card_items = ("jacks", "aces", "two_clubs", "ten_diamonds")
    for side in sides:
        items = ("majority", *card_items, "basras")
        assert side["total"] == sum(side[item] for item in items)
    assert sum(side["cards"] for side in sides) == len(DECK)
    winners = [index for index, side in enumerate(sides) if side["cards"] * 2 > len(DECK)]
    voided = not winners and rules.tie_policy == "void_round_carry"
    if voided:
        assert all(side["total"] == 0 for side in sides)
        assert event["carry"] == before.carry + rules.majority_points
    else:
        assert [side["basras"] for side in sides] == recorded
        card_sum = sum(side[item] for side in sides for item in card_items)
        assert card_sum == (13 if rules.card_points else 0)
    majorities = [side["majority"] for side in sides]
    assert sum(1 for points in majorities if points) <= 1
    if winners:
        assert majorities[winners[0]] == rules.majority_points + before.carry
        assert event["carry"] == 0
    else:
        assert majorities == [0, 0]
    banked = [score + side["total"] for score, side in zip(before.scores, sides)]
    assert event["scores"] == banked


def random_match(state: State, rng: Mover):
    """Yield (state, move, next state, events) until the match is over."""
    for _ in range(MOVE_LIMIT):
        if state.status == "match_over":
            return
        move = rng.pick(state)
        after, events = apply(state, move)
        yield state, move, after, events
        state = after
    raise AssertionError("the match did not end")


def check_turn(before: State, move: Move, after: State, events: list[dict[str, Any]]) -> None:
    kinds = {event["type"] for event in events}
    if kinds & {"deal", "round_end"}:
        return
    assert after.turn == (before.turn + 1) % before.seats
    if move.capture:
        assert after.last_capturer == before.turn
        assert after.table == tuple(c for c in before.table if c not in move.capture)
    else:
        assert after.last_capturer == before.last_capturer
        assert after.table == (*before.table, move.card)


def hidden_cards(state: State) -> set[str]:
    return {*state.stock, *(card for hand in state.hands for card in hand)}


def check_events_hide_cards(
    before: State, move: Move, after: State, events: list[dict[str, Any]]
) -> None:
    """Events name only public cards: those of the round they describe, and for a new
    round's deal only its table."""
    old_round_secret = hidden_cards(before) - {move.card}
    if after.round == before.round:
        old_round_secret &= hidden_cards(after)
    for event in events:
        new_round = event["type"] == "deal" and event["round"] != before.round
        secret = hidden_cards(after) if new_round else old_round_secret
        text = json.dumps(event)
        assert not [card for card in secret if f'"{card}"' in text], event


def check_running_score(state: State) -> None:
    for side in score(state):
        items = ("majority", "jacks", "aces", "two_clubs", "ten_diamonds", "basras")
        assert side["total"] == sum(side[item] for item in items)
        assert (side["majority"] > 0) <= (side["cards"] * 2 > len(DECK))


@PROPERTY
@given(games(), movers)
def test_random_matches_keep_every_invariant(state: State, rng: Mover) -> None:
    recorded = [0, 0]
    round_trip(state)
    for before, move, after, events in random_match(state, rng):
        moves = legal_moves(before)
        assert len(moves) == len(set(moves)), "duplicate legal moves"
        assert every_card_once(after)
        round_trip(after)
        check_turn(before, move, after, events)
        check_events_hide_cards(before, move, after, events)
        check_running_score(after)
        for event in events:
            if event["type"] == "basra":
                recorded[event["side"]] += event["points"]
            if event["type"] == "round_end":
                check_round_end(event, before, recorded)
                recorded = [0, 0]
        state = after
    assert state.status == "match_over" and state.turn is None
    assert state.winner is not None
    best = state.scores[state.winner]
    assert best >= state.rules.target_score
    assert all(score < best for side, score in enumerate(state.scores) if side != state.winner)


@PROPERTY
@given(games(), movers, st.integers(1, 300))
def test_same_seed_and_moves_give_the_same_game(state: State, rng: Mover, length: int) -> None:
    played = []
    for _, move, after, events in random_match(state, rng):
        played.append((move, after.to_json(), events))
        if len(played) == length:
            break
    replay = new_game(state.rules, state.seats, state.seed)
    assert replay.to_json() == state.to_json()
    for move, expected_state, expected_events in played:
        replay, events = apply(replay, {"card": move.card, "capture": list(move.capture)})
        assert replay.to_json() == expected_state
        assert events == expected_events


@PROPERTY
@given(games(), movers)
def test_a_state_without_a_seed_deals_its_next_round_from_itself(state: State, rng: Mover) -> None:
    """Contract: a state without a seed is valid and its next deal derives from the state."""
    for before, _, after, events in random_match(state, rng):
        if any(event["type"] == "round_end" for event in events) and after.status == "playing":
            seedless = State.from_json({k: v for k, v in before.to_json().items() if k != "seed"})
            move = {"card": events[0]["card"], "capture": events[0]["capture"]}
            first, first_events = apply(seedless, move)
            again, again_events = apply(State.from_json(seedless.to_json()), move)
            assert first.to_json() == again.to_json() and first_events == again_events
            assert first.seed is None and "seed" not in first.to_json()
            assert every_card_once(first) and first.round == before.round + 1
            return


def random_move(state: State, rng: Mover) -> dict[str, Any]:
    """Mostly cards from the hand with random table subsets, sometimes any card at all."""
    hand = state.hands[state.turn]
    card = rng.choice(hand) if hand and rng.random() < 0.8 else rng.choice(DECK)
    pool = [*state.table, rng.choice(DECK)]
    capture = rng.sample(pool, rng.randint(0, len(pool)))
    return {"card": card} if rng.random() < 0.1 else {"card": card, "capture": capture}


def is_listed(state: State, move: dict[str, Any]) -> bool:
    options = [m for m in legal_moves(state) if m.card == move["card"]]
    if "capture" not in move:
        return len(options) == 1
    capture = move["capture"]
    return len(set(capture)) == len(capture) and any(
        option.capture == canonical(capture) for option in options
    )


@PROPERTY
@given(games(), movers)
def test_moves_outside_the_list_are_rejected_and_change_nothing(state: State, rng: Mover) -> None:
    for before, _, _, _ in random_match(state, rng):
        if before.round > 1:
            break
        frozen = before.to_json()
        for _ in range(3):
            attempt = random_move(before, rng)
            if is_listed(before, attempt):
                assert read_move(before, attempt) in legal_moves(before)
                continue
            try:
                apply(before, attempt)
            except MoveError:
                pass
            else:
                raise AssertionError(f"illegal move accepted: {attempt}")
        assert before.to_json() == frozen


@PROPERTY
@given(games(), movers)
def test_every_legal_move_applies(state: State, rng: Mover) -> None:
    for before, _, _, _ in random_match(state, rng):
        if before.round > 1:
            break
        for move in legal_moves(before):
            after, events = apply(before, move)
            assert events[0] == {"type": "move", "seat": before.turn, "card": move.card,
                                 "capture": list(move.capture)}  # fmt: skip
            assert every_card_once(after)


@PROPERTY
@given(games(), movers)
def test_a_view_hides_other_hands_the_stock_and_the_seed(state: State, rng: Mover) -> None:
    for before, _, _, _ in random_match(state, rng):
        if before.round > 2:
            break
        for seat in range(before.seats):
            seen = view(before, seat)
            text = json.dumps(seen)
            hidden = [*before.stock]
            for other, hand in enumerate(before.hands):
                if other != seat:
                    hidden += hand
            assert not [card for card in hidden if f'"{card}"' in text]
            assert "seed" not in seen and before.seed not in text
            assert seen["hand"] == sort_cards(before.hands[seat])


# --- the oracle for §5.1 ------------------------------------------------------------------

NUMERALS = [card for card in DECK if VALUE[card]]
FACES = [card for card in DECK if not VALUE[card]]


def brute_force_covers(value: int, table: list[str]) -> set[frozenset[str]]:
    """Every cover of a family of pairwise-disjoint groups summing to `value`, read straight
    from §5.1: all subsets of the table's numerals are candidate groups, and every family
    of disjoint ones is a union of some of them taken one after another."""
    numerals = [card for card in table if VALUE[card]]
    groups = [
        frozenset(group)
        for size in range(1, len(numerals) + 1)
        for group in combinations(numerals, size)
        if sum(VALUE[card] for card in group) == value
    ]
    covers = {frozenset()}
    for group in groups:
        covers |= {cover | group for cover in covers if not cover & group}
    return covers - {frozenset()}


def largest(covers: set[frozenset[str]]) -> set[frozenset[str]]:
    most = max(map(len, covers), default=0)
    return {cover for cover in covers if len(cover) == most}


tables = st.tuples(
    st.lists(st.sampled_from(NUMERALS), unique=True, max_size=8),
    st.lists(st.sampled_from(FACES), unique=True, max_size=3),
).flatmap(lambda parts: st.permutations(parts[0] + parts[1]))


def oracle_rules(policy: str, forced: bool) -> Rules:
    # A plain seven of diamonds is an ordinary numeral, on the table and in hand (§5.4).
    return rules_with(
        seven_diamonds_mode="plain", capture_policy=policy, forced_capture=forced,
        table_seven_diamonds="plain",
    )  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(tables, st.sampled_from(["max_cards", "any_family"]), st.booleans())
def test_sum_captures_match_the_brute_force(table: list[str], policy: str, forced: bool) -> None:
    rules = oracle_rules(policy, forced)
    for card in NUMERALS:
        if card in table:
            continue
        covers = brute_force_covers(VALUE[card], table)
        expected = largest(covers) if policy == "max_cards" else covers
        moves = card_moves(card, tuple(table), rules, final=False)
        captures = [move.capture for move in moves if move.capture]
        assert len(captures) == len(set(captures)), f"{card} on {table}: duplicate captures"
        assert all(list(capture) == sort_cards(capture) for capture in captures)
        assert {frozenset(capture) for capture in captures} == expected, f"{card} on {table}"
        lays = [move for move in moves if not move.capture]
        assert len(lays) == (1 if not expected or not forced else 0)


def test_the_oracle_agrees_with_the_worked_cases() -> None:
    assert largest(brute_force_covers(6, ["AC", "5D", "3H", "2S", "4C"])) == {
        frozenset(["AC", "4C", "5D", "2S"])
    }
    assert largest(brute_force_covers(9, ["2C", "6S", "3H", "5D", "AD", "9S"])) == {
        frozenset(["2C", "AD", "6S", "9S"]),
        frozenset(["AD", "5D", "3H", "9S"]),
    }
    assert largest(brute_force_covers(1, ["AC", "AD", "2S"])) == {frozenset(["AC", "AD"])}


# --- an oracle for every card's moves (§5 and §6) ----------------------------------------


def sweeps(card: str, rules: Rules) -> bool:
    return card[0] == "J" or (card == "7D" and rules.seven_diamonds_mode != "plain")


def lone_wild_seven(table: list[str], rules: Rules) -> bool:
    return rules.table_seven_diamonds == "lone_wild" and table == ["7D"]


def oracle_captures(card: str, table: list[str], rules: Rules) -> set[frozenset[str]]:
    if not table:
        return set()
    if lone_wild_seven(table, rules) and card[0] != "J":
        return {frozenset(table)}
    if sweeps(card, rules):
        return {frozenset(table)}
    if card[0] in "QK":
        same = frozenset(other for other in table if other[0] == card[0])
        return {same} if same else set()
    covers = brute_force_covers(VALUE[card], table)
    return largest(covers) if rules.capture_policy == "max_cards" else covers


def wild_seven_clears(table: list[str]) -> bool:
    """Some rank A..T, Q or K would have an outcome covering the whole table (§6.3)."""
    if all(card[0] == "Q" for card in table) or all(card[0] == "K" for card in table):
        return True
    return any(
        frozenset(table) in largest(brute_force_covers(value, table)) for value in range(1, 11)
    )


def oracle_basra(card: str, table: list[str], capture: frozenset[str], rules: Rules):
    """The basra points of a capture under §6, None when it is no basra."""
    lone_jack = len(table) == 1 and table[0][0] == "J" and rules.jack_basra_points > 0
    if lone_wild_seven(table, rules) and card[0] != "J":
        return rules.basra_points
    if card[0] == "J":
        return rules.jack_basra_points if lone_jack else None
    if card == "7D" and rules.seven_diamonds_mode == "sweep":
        small = sum(VALUE[other] for other in table) <= rules.seven_diamonds_basra_max_sum
        return rules.basra_points if all(VALUE[c] for c in table) and small else None
    if card == "7D" and rules.seven_diamonds_mode == "wild":
        if lone_jack:
            return rules.jack_basra_points
        return rules.basra_points if wild_seven_clears(table) else None
    return rules.basra_points if len(capture) == len(table) else None


def oracle_moves(card: str, table: list[str], rules: Rules, final: bool) -> set[Move]:
    moves = set()
    for capture in oracle_captures(card, table, rules):
        points = oracle_basra(card, table, capture, rules)
        if points is not None and final and not rules.last_card_basra_counts:
            points = 0
        moves.add(Move(card, canonical(capture), points is not None, points or 0))
    if not moves or not rules.forced_capture:
        moves.add(Move(card, ()))
    return moves


MOVE_RULES = {
    key: OPTION_VALUES[key]
    for key in (
        "forced_capture", "capture_policy", "seven_diamonds_mode", "table_seven_diamonds",
        "seven_diamonds_basra_max_sum", "basra_points", "jack_basra_points",
        "last_card_basra_counts",
    )
}  # fmt: skip

special_tables = st.sampled_from(
    [["7D"], ["JC"], ["QC", "QH"], ["KD"], ["JC", "JD"], ["AC", "2D", "7H", "8S"], ["TC", "TD"]]
)
any_tables = st.tuples(
    st.lists(st.sampled_from(NUMERALS), unique=True, max_size=7),
    st.lists(st.sampled_from(FACES), unique=True, max_size=3),
).flatmap(lambda parts: st.permutations(parts[0] + parts[1]))


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(any_tables, special_tables),
    st.sampled_from(["levantine", "egyptian"]),
    st.fixed_dictionaries({}, optional=MOVE_RULES),
    st.booleans(),
)
def test_every_cards_moves_match_the_rules_oracle(
    table: list[str], preset: str, overrides: dict[str, Any], final: bool
) -> None:
    rules = rules_with(preset, **overrides)
    for card in DECK:
        if card in table:
            continue
        moves = card_moves(card, tuple(table), rules, final)
        assert len(moves) == len(set(moves))
        assert set(moves) == oracle_moves(card, table, rules, final), f"{card} on {table}"
