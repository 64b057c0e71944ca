"""Computer players on Bank: legal, deterministic, blind to hidden cards, stronger by level,
and Bank's own search knowledge (engine/bank/search.py) doing what it says."""

import random
from argparse import Namespace
from typing import Any

import pytest

from engine.bank.search import ITERATIONS, BankSearch, choose
from engine.bots import LEVELS, choose_move, hint
from engine.bots.arena import run
from engine.bots.expert import budget
from engine.bots.search import search_of
from engine.game import get_game
from tests.engine.bank_builders import bank_state

GAME = get_game("bank")
SEARCH = BankSearch()


def positions(seats: int, count: int, seed: str, rules: dict[str, Any] | None = None) -> list:
    """`count` positions with a choice to make (two legal moves or more) and cards left
    in the stock, spread over a match played with random moves."""
    rng = random.Random(seed)
    state = GAME.new(rules or {}, seats, seed)
    found = []
    while GAME.to_move(state) is not None and len(found) < count:
        if len(GAME.legal_moves(state)) > 1 and len(state.stock) > 1 and rng.random() < 0.3:
            found.append(state)
        state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    return found


def position(seats: int = 2, **fields: Any) -> Any:
    return GAME.read(bank_state(seats, **fields))


def test_bank_offers_its_own_search_knowledge() -> None:
    assert isinstance(search_of(GAME), BankSearch)


@pytest.mark.parametrize(
    "rules",
    [
        {"after_capture": "free_lead", "after_seven": "draw_then_play"},
        {"after_capture": "turn_up", "after_seven": "skip_and_draw", "trump_mode": "double"},
        {"trump_mode": "senior_junior", "penalty_mode": "per_card", "after_seven": "none"},
    ],
)
def test_every_level_plays_under_other_options(rules: dict[str, Any]) -> None:
    for index, state in enumerate(positions(3, 4, f"options/{rules}", rules)):
        for level in LEVELS:
            assert choose_move(GAME, state, level, f"o{index}") in GAME.legal_moves(state)


def test_the_expert_spends_its_playouts_on_choices() -> None:
    assert budget(SEARCH, 1) == 1
    assert budget(SEARCH, 3) == ITERATIONS
    assert budget(search_of(get_game("basra")), 1) == 24


def test_greedy_goes_out_with_a_quad_for_its_bonus() -> None:
    # JH beats QH, but the four jacks empty the hand: 75 points at once.
    state = position(hands={0: "JC JD JH JS", 1: "7S 9S"}, bank="AH/P QH/1")
    move, alternatives = hint(GAME, state, "greedy", "g")
    assert move.type == "quad"
    values = {m: v for m, v in alternatives}
    assert {v for m, v in values.items() if m.type == "quad"} == {75.0}
    assert values[GAME.read_move(state, {"type": "lay", "card": "JH"})] == 0.0


def test_greedy_sheds_points_rather_than_a_card_that_beats_many() -> None:
    # The ten and the six both beat the ace of hearts: the ten's points leave the hand,
    # the six (it beats every heart) stays for later.
    state = position(hands={0: "6H TH 7C 9D", 1: "7S 9S"}, bank="KC/P AH/1")
    assert choose_move(GAME, state, "greedy", "g").cards == ("TH",)


def test_greedy_saves_a_rich_bank_with_an_eight() -> None:
    # Nothing beats the six and the stock is empty: passing hands the 22 points of the
    # bank to seat 1, while the eight keeps it, its follow-up being seat 0's own.
    state = position(hands={0: "8C 9D", 1: "7S 9S"}, bank="AH/P TH/0 6H/1", rest_to=1)
    move, alternatives = hint(GAME, state, "greedy", "g")
    assert move.cards == ("8C",)
    assert dict((m.type, v) for m, v in alternatives)["pass"] == -22.0


def test_the_playout_ends_with_the_deal_as_the_rules_score_it() -> None:
    # Seat 0 goes out with its last card: 20 for going out, seat 1 the loser with 12 + 5
    # points in hand. The bank on the table is discarded.
    state = position(hands={0: "6H", 1: "AS KS"}, bank="AH/P 9H/1")
    (move,) = GAME.legal_moves(state)
    assert SEARCH.playout(state, move, 0, random.Random(1), 2.0) == 20 + 17
    assert SEARCH.playout(state, move, 1, random.Random(1), 2.0) == -(20 + 17)


def replayed_difference(state: Any, move: Any, seat: int, rng: random.Random) -> int:
    """Play `move`, then the playout policy through the game protocol to the deal's end;
    the deal's total for `seat` minus the best other seat's, from the deal_end event."""
    state, events = GAME.apply(state, move)
    while not any(event["type"] == "deal_end" for event in events):
        state, events = GAME.apply(state, choose(state, rng, 2.0))
    (deal_end,) = (event for event in events if event["type"] == "deal_end")
    totals = [side["total"] for side in deal_end["sides"]]
    return totals[seat] - max(total for other, total in enumerate(totals) if other != seat)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_playout_difference_is_the_deal_as_the_rules_score_it(seats: int) -> None:
    for index, state in enumerate(positions(seats, 5, f"playout/{seats}")):
        seat = GAME.to_move(state)
        for move in GAME.legal_moves(state):
            value = SEARCH.playout(state, move, seat, random.Random(index), 2.0)
            assert value == replayed_difference(state, move, seat, random.Random(index))


def duel(a: str, b: str, matches: int, target: int) -> int:
    """Matches of 2 seats to `target` points between levels `a` and `b` (`a` in seat 0 of
    even matches, seat 1 of odd ones); how many `a` wins."""
    wins = 0
    for index in range(matches):
        state = GAME.new({"target_score": target}, 2, f"duel/{index}")
        a_seat = index % 2
        ply = 0
        while (seat := GAME.to_move(state)) is not None:
            level = a if seat == a_seat else b
            state, _ = GAME.apply(state, choose_move(GAME, state, level, f"{index}/{ply}"))
            ply += 1
        wins += a_seat in GAME.outcome(state).winners
    return wins


def test_greedy_beats_random_in_the_arena() -> None:
    tally = run(
        Namespace(game="bank", a="greedy", b="random", matches=24, preset="", seats=2, jobs=1,
                  seed="tests")
    )  # fmt: skip
    assert tally.a_wins >= 15


def test_expert_beats_random() -> None:
    assert duel("expert", "random", 12, 100) >= 7


def passes_seen(seats: int, seed: str) -> list[tuple[Any, int, Any]]:
    """(state, the seat that passed, the state before its pass) in a random match, wherever
    a seat passed on a target laid by a seat and the target's card stayed (the bank kept,
    or taken on that pass, its top card left as a virtual target), and again after the
    next seat's draw on a virtual target (the draw resets `idle`, not what the pass
    showed)."""
    rng = random.Random(seed)
    state = GAME.new({}, seats, seed)
    found = []
    while GAME.to_move(state) is not None and len(found) < 60:
        before, mover = state, GAME.to_move(state)
        move = rng.choice(GAME.legal_moves(state))
        state, _ = GAME.apply(state, move)
        kept = state.target and before.target and state.target.card == before.target.card
        if move.type == "pass" and kept and before.target.by is not None and state.turn is not None:
            found.append((state, mover, before))
            if state.target.virtual and "draw" in (m.type for m in GAME.legal_moves(state)):
                drawn, _ = GAME.apply(state, {"type": "draw"})
                found.append((drawn, mover, before))
    return found


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_expert_deals_no_answer_to_a_seat_that_passed_on_the_target(seats: int) -> None:
    from engine.bank.hidden import passers
    from engine.bank.moves import beaters

    seen = passes_seen(seats, f"passes/{seats}")
    assert sum(not state.target.virtual for state, _, _ in seen) >= 10
    assert sum(state.target.virtual and state.idle == 0 for state, _, _ in seen) >= 3
    for state, passer, before in seen:
        assert passers(state)[0] == passer
        cannot = beaters(state.target.card, state.common, state.personal[passer])
        assert not cannot & set(before.hands[passer])  # the rule: a pass holds no answer
        viewer = state.turn
        if viewer == passer:
            continue
        for seed in range(20):
            world = GAME.determinize(state, viewer, random.Random(seed))
            assert not cannot & set(world.hands[passer])
            assert GAME.view(world, viewer) == GAME.view(state, viewer)
            assert [len(hand) for hand in world.hands] == [len(hand) for hand in state.hands]
            assert len(world.stock) == len(state.stock)


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize(
    "rules",
    [
        {},
        {"after_capture": "turn_up", "after_seven": "skip_and_draw", "trump_mode": "double"},
        {"after_capture": "free_lead", "after_seven": "draw_then_play", "trump_mode": "single"},
    ],
)
def test_every_seat_named_a_passer_holds_no_answer(seats: int, rules: dict[str, Any]) -> None:
    # What the deals rest on, wherever a match goes: no seat `passers` names holds a card
    # that beats the target's card.
    from engine.bank.hidden import passers
    from engine.bank.moves import beaters

    rng = random.Random(f"{seats}{rules}")
    named = 0
    for match in range(3):
        state = GAME.new({**rules, "target_score": 100}, seats, f"named/{seats}{rules}{match}")
        while GAME.to_move(state) is not None:
            for passer in passers(state):
                cannot = beaters(state.target.card, state.common, state.personal[passer])
                assert not cannot & set(state.hands[passer])
                named += 1
            state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    assert named >= 10


def test_nothing_is_revealed_without_a_pass_on_the_targets_card() -> None:
    from engine.bank.hidden import passers

    for state, _, _ in passes_seen(3, "unrevealed"):
        if not state.target.virtual:
            assert passers(state._replace(idle=0)) == []
    # Seat 0 goes out with its trump king and takes the bank at once: the king is left as
    # the virtual target and nobody passed on it, before seat 1's draw or after it.
    state = position(3, hands={0: "KH", 1: "7S 9S", 2: "7C 9C"}, bank="AC/P QC/2",
                     trumps="single H", stock="6D")  # fmt: skip
    state, _ = GAME.apply(state, GAME.read_move(state, {"type": "lay", "card": "KH"}))
    assert state.target.virtual and state.target.card == "KH" and state.turn == 1
    assert passers(state) == []
    state, _ = GAME.apply(state, GAME.read_move(state, {"type": "draw"}))
    assert state.drawn and passers(state) == []
