"""Every match ends by rule: the round cap, the target's maximum, and no rules without points."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bank.rules import MAX_TARGET_SCORE as BANK_MAX_TARGET
from engine.bank.rules import Rules as BankRules
from engine.basra import Rules
from engine.basra.rules import MAX_TARGET_SCORE, SCORING_OPTIONS
from engine.basra.state import MAX_ROUNDS
from engine.errors import GameError
from engine.game import get_game
from tests.engine.builders import LEVANTINE
from tests.engine.test_cases import end_of, finishing_state, round_worth_30_and_13

NO_POINTS = {"basra_points": 0, "jack_basra_points": 0, "majority_points": 0,
             "card_points": False}  # fmt: skip


def test_rules_under_which_no_side_can_score_are_refused() -> None:
    with pytest.raises(GameError) as refused:
        Rules.from_json({"preset": "levantine", **NO_POINTS})
    assert refused.value.path == "rules"
    assert all(option in refused.value.reason for option in SCORING_OPTIONS)


@pytest.mark.parametrize("option", SCORING_OPTIONS)
def test_any_one_source_of_points_is_enough(option: str) -> None:
    points = True if option == "card_points" else 1
    rules = Rules.from_json({"preset": "egyptian", **NO_POINTS, option: points})
    assert getattr(rules, option)


@pytest.mark.parametrize("game,limit", [("basra", MAX_TARGET_SCORE), ("bank", BANK_MAX_TARGET)])
def test_target_score_has_a_maximum(game: str, limit: int) -> None:
    assert get_game(game).name == game
    read = Rules.from_json if game == "basra" else BankRules.from_json
    assert read({"target_score": limit}).target_score == limit
    with pytest.raises(GameError) as refused:
        read({"target_score": limit + 1})
    assert refused.value.path == "target_score"
    assert str(limit) in refused.value.reason


def test_the_round_cap_ends_the_match_below_the_target() -> None:
    state = finishing_state(LEVANTINE, round_worth_30_and_13(), scores=(10, 50),
                            round_number=MAX_ROUNDS)  # fmt: skip
    after, events = end_of(state)
    assert after.scores == (40, 63)
    assert events["match_end"] == {"type": "match_end", "winner": 1, "scores": [40, 63]}
    assert (after.status, after.winner, after.turn, after.round) == (
        "match_over", 1, None, MAX_ROUNDS)  # fmt: skip
    assert type(after).from_json(after.to_json()) == after


def test_a_tie_at_the_cap_goes_to_the_side_that_swept_the_last_round() -> None:
    # Side 1 takes the leftovers (finishing_state's sweep): 70 + 30 = 87 + 13.
    state = finishing_state(LEVANTINE, round_worth_30_and_13(), scores=(70, 87),
                            round_number=MAX_ROUNDS)  # fmt: skip
    after, events = end_of(state)
    assert after.scores == (100, 100)
    assert events["match_end"]["winner"] == 1


def test_before_the_cap_a_round_below_the_target_plays_on() -> None:
    state = finishing_state(LEVANTINE, round_worth_30_and_13(), scores=(10, 50),
                            round_number=MAX_ROUNDS - 1)  # fmt: skip
    after, events = end_of(state)
    assert "match_end" not in events
    assert after.round == MAX_ROUNDS


def test_a_state_beyond_the_cap_is_refused() -> None:
    state = finishing_state(LEVANTINE, round_worth_30_and_13(), round_number=MAX_ROUNDS)
    data = state.to_json()
    data["round"] = MAX_ROUNDS + 1
    with pytest.raises(GameError) as refused:
        type(state).from_json(data)
    assert refused.value.path == "round"


@settings(max_examples=8, deadline=None)
@given(
    points=st.sampled_from(["basra_points", "jack_basra_points", "majority_points"]),
    tie=st.sampled_from(["void_round_carry", "carry", "none"]),
    seats=st.sampled_from([2, 4]),
    seed=st.text(max_size=8),
)
def test_a_match_on_the_thinnest_accepted_rules_ends_by_the_cap(points, tie, seats, seed):
    """One point a basra (or a majority) and the highest target: random play still reaches
    match_over, by round MAX_ROUNDS at the latest."""
    game = get_game("basra")
    rules = {"preset": "levantine", **NO_POINTS, points: 1, "tie_policy": tie,
             "target_score": MAX_TARGET_SCORE}  # fmt: skip
    state = game.new(rules, seats, seed)
    rng = random.Random(seed)
    while game.to_move(state) is not None:
        state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
    assert game.outcome(state) is not None
    assert state.round <= MAX_ROUNDS
