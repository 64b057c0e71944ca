"""Bank's engine against an independent reference of the rules (tests/engine/bank_reference.py,
written from bank-rules.md alone): generated positions of every kind, each legal move applied
by both, and whole matches over every seat count and trump mode; the events, the state after
the move, the score as it stands, a fresh deal, and what a seat's view and events hide."""

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.game import get_game
from tests.engine import bank_reference as ref

GAME = get_game("bank")
PACK = [rank + suit for suit in "CDHS" for rank in "6789TJQKA"]
OPTIONS: dict[str, list[Any]] = {
    "dealer_rule": ["loser", "finisher", "starter", "max_points", "min_points"],
    "trump_mode": ["per_player", "none", "single", "double", "senior_junior"],
    "after_seven": ["skip", "draw_then_play", "skip_and_draw", "none"],
    "after_capture": ["virtual_target", "free_lead", "turn_up"],
    "hand_penalty": [True, False],
    "penalty_mode": ["hand_points", "fixed", "per_card"],
    "fixed_penalty": [15, 23, 31, 40, 48, 56],
    "per_card_penalty": [3, 6],
}
# Quads and runs, which random hands seldom hold.
GIFTS = [
    *([rank + suit for suit in "CDHS"] for rank in "6789JQKTA"),
    *([rank + suit for rank in "6789JQKTA"[low : low + 4]] for suit in "CDHS" for low in range(6)),
]


def as_move(move: dict[str, Any]) -> ref.Move:
    if move["type"] == "lay":
        return ("lay", move["card"])
    if move["type"] in ("quad", "run"):
        return (move["type"], tuple(move["cards"]))
    return (move["type"],)


def as_json(move: ref.Move) -> dict[str, Any]:
    if move[0] == "lay":
        return {"type": "lay", "card": move[1]}
    if move[0] in ("quad", "run"):
        return {"type": move[0], "cards": list(move[1])}
    return {"type": move[0]}


def trumps_of(mode: str, seats: int, suits: str) -> dict[str, Any]:
    common = dict.fromkeys("CDHS", 0)
    common.update({
        "single": {suits[0]: 1}, "double": {"D": 1, "S": 1},
        "senior_junior": {"D": 1, "S": 2},
    }.get(mode, {}))  # fmt: skip
    personal = list(suits[:seats]) if mode == "per_player" else [None] * seats
    return {"common": common, "personal": personal}


@st.composite
def positions(draw) -> dict[str, Any]:
    """A consistent position of a deal in play: any options, trumps, seats out, hand and
    stock sizes, bank, target, `drawn`, `idle`, scores, deal number and tie-break."""
    rules = {"preset": "classic", **{k: draw(st.sampled_from(v)) for k, v in OPTIONS.items()}}
    rules["target_score"] = draw(st.sampled_from([1, 100, 248]))
    seats = draw(st.sampled_from([2, 3, 4]))
    suits = "".join(draw(st.permutations("CDHS")))
    out_seats = draw(st.lists(st.integers(0, seats - 1), unique=True, max_size=seats - 2))
    holders = [seat for seat in range(seats) if seat not in out_seats]
    turn = draw(st.sampled_from(holders))
    gift = draw(st.sampled_from([[], [], *GIFTS]))
    rest = [card for card in draw(st.permutations(PACK)) if card not in gift]
    hands: list[list[str]] = [[] for _ in range(seats)]
    for seat in holders:
        # Any hand size is valid (contract): the seat to move sometimes holds many cards.
        most = min(14 if seat == turn else 6, len(rest) - 2)
        size = draw(st.integers(0 if seat == turn and gift else 1, most))
        hands[seat] = ref.canonical([*(gift if seat == turn else []), *rest[:size]])
        rest = rest[size:]
    banked = draw(st.integers(0, 4))
    bank = [{"card": card, "by": draw(st.integers(0, seats - 1))} for card in rest[:banked]]
    if bank and draw(st.booleans()):
        bank[0]["by"] = None
    rest = rest[banked:]
    stock_size = draw(st.sampled_from([0, 0, 1, 2, len(rest) // 2]))
    stock, piles = rest[:stock_size], rest[stock_size:]
    captured: list[list[str]] = [[] for _ in range(seats)]
    for card in piles:
        captured[draw(st.integers(0, seats - 1))].append(card)
    if bank:
        target = {"card": bank[-1]["card"], "by": bank[-1]["by"], "virtual": False}
    elif rules["after_capture"] == "free_lead":
        target = None
    else:
        target = {"card": piles[0], "by": None, "virtual": True}
    out = []
    for place, seat in enumerate(out_seats, start=1):
        finish = draw(st.sampled_from(sorted(ref.BONUS)))
        out.append({"seat": seat, "place": place, "finish": finish,
                    "bonus": ref.BONUS[finish][place - 1]})  # fmt: skip
    tiebreak = None
    if draw(st.integers(0, 4)) == 0:
        eligible = draw(st.lists(st.integers(0, seats - 1), unique=True, min_size=2))
        tiebreak = {"eligible": sorted(eligible), "extra_deals": draw(st.integers(0, 4))}
    return {
        "game": "bank", "rules": rules, "seats": seats,
        "dealer": draw(st.integers(0, seats - 1)),
        "trumps": trumps_of(rules["trump_mode"], seats, suits),
        "hands": hands, "stock": stock, "bank": bank, "target": target, "turn": turn,
        "drawn": draw(st.booleans()), "out": out,
        "captured": [ref.canonical(pile) for pile in captured],
        "idle": draw(st.integers(0, len(holders) - (0 if stock else 1))),
        "starter": draw(st.integers(0, seats - 1)),
        "scores": [draw(st.integers(-60, 300)) for _ in range(seats)],
        "deal": draw(st.sampled_from([1, 2, 150, 199, 200])), "status": "playing",
        "winner": None, "winners": [], "tiebreak": tiebreak,
        **({"seed": "reference"} if draw(st.booleans()) else {}),
    }  # fmt: skip


def assert_fresh_deal(data: dict[str, Any], deal: int, dealer: int) -> None:
    """§4.2-§4.4 and §13: the next deal as dealt in the same move."""
    seats = data["seats"]
    assert (data["deal"], data["dealer"]) == (deal, dealer)
    assert [len(hand) for hand in data["hands"]] == [4] * seats
    assert len(data["stock"]) == 36 - 4 * seats - 1
    pack = data["bank"][0]["card"]
    assert data["bank"] == [{"card": pack, "by": None}]
    assert data["target"] == {"card": pack, "by": None, "virtual": False}
    assert data["starter"] == data["turn"] == ref.first_player(data["hands"], pack, dealer)
    assert data["out"] == [] and data["captured"] == [[]] * seats
    assert (data["idle"], data["drawn"], data["status"]) == (0, False, "playing")


def check_move(
    before: dict[str, Any], move: ref.Move
) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """Apply `move` to `before` in the engine and in the reference; they must agree."""
    state = GAME.read(before)
    after, events = GAME.apply(state, GAME.read_move(state, as_json(move)))
    data = GAME.write(after)
    expected, expected_events = ref.apply(before, move)
    if expected_events[-1]["type"] == "deal":
        assert events[:-1] == expected_events[:-1]
        wanted = expected_events[-1]
        assert events[-1] == {
            "type": "deal", "deal": wanted["deal"], "dealer": wanted["dealer"],
            "starter": data["starter"], "card": data["bank"][0]["card"],
        }  # fmt: skip
        assert_fresh_deal(data, wanted["deal"], wanted["dealer"])
        for key in ("rules", "seats", "trumps", "scores", "tiebreak", "winner", "winners"):
            assert data[key] == expected[key], key
    else:
        assert events == expected_events
        assert data == expected
        deal_end = [event for event in events if event["type"] == "deal_end"]
        # §12.4: as it stands (every penalty 0), or the final deal's as deal_end reported it.
        sides = deal_end[0]["sides"] if deal_end else ref.breakdown(data, None)
        assert GAME.score(after) == sides
    assert GAME.write(GAME.read(data)) == data
    return after, data, events


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_every_legal_move_of_any_position_follows_the_rules(data: dict[str, Any]) -> None:
    state = GAME.read(data)
    data = GAME.write(state)
    listed = [as_move(GAME.write_move(state, move)) for move in GAME.legal_moves(state)]
    assert len(listed) == len(set(listed)) and set(listed) == ref.legal(data)
    for move in listed:
        check_move(data, move)


def assert_view_hides(state: Any, data: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Contract `view`: no other hand, no stock, no seed, but every hand size and the stock
    size; in events sent to a seat another seat's drawn card is null."""
    for seat in range(data["seats"]):
        view = GAME.view(state, seat)
        assert not {"hands", "stock", "seed"} & set(view)
        assert view["seat"] == seat and sorted(view["hand"]) == sorted(data["hands"][seat])
        assert view["hand_sizes"] == [len(hand) for hand in data["hands"]]
        assert view["stock_size"] == len(data["stock"])
        public = {key: value for key, value in data.items() if key not in ("hands", "stock")}
        public.pop("seed", None)
        assert {key: view[key] for key in public} == public
        for event, seen in zip(events, GAME.events_for(events, seat)):
            if event["type"] == "draw" and event["seat"] != seat:
                assert seen == {**event, "card": None}
            else:
                assert seen == event


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("mode", OPTIONS["trump_mode"])
def test_whole_matches_follow_the_rules(seats: int, mode: str) -> None:
    rng = random.Random(f"{seats}/{mode}")
    for number in range(2):
        rules = {"preset": "classic", **{k: rng.choice(v) for k, v in OPTIONS.items()}}
        rules.update(trump_mode=mode, target_score=rng.choice([60, 150]))
        state = GAME.new(rules, seats, f"reference/{seats}/{mode}/{number}")
        data = GAME.write(state)
        assert_fresh_deal(data, 1, data["dealer"])
        assert data["scores"] == [0] * seats and data["tiebreak"] is None
        # §2: the trumps fit the mode, and stay the same for every deal.
        trumps = data["trumps"]
        if mode == "per_player":
            assert len(set(trumps["personal"])) == seats and None not in trumps["personal"]
        else:
            assert trumps["personal"] == [None] * seats
        while data["status"] == "playing":
            moves = sorted(ref.legal(data))
            free = [move for move in moves if move[0] in ("quad", "run")]
            move = rng.choice(free if free and rng.random() < 0.5 else moves)
            state, data, events = check_move(data, move)
            assert data["trumps"] == trumps
            assert_view_hides(state, data, events)
        assert data["turn"] is None and data["winners"]
        assert GAME.legal_moves(state) == []
