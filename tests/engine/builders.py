"""Consistent Basra states made by hand for the engine tests.

Every builder goes through `State.from_json`, so a state that the engine would reject
never reaches a test: the cards a case does not mention are put in the stock and in a
side's captured pile, where they cannot influence the play under test.
"""

import random
from collections.abc import Iterable, Sequence
from typing import Any

from engine.basra import PRESETS, Rules, State, apply, legal_moves, new_game
from engine.basra.cards import DECK

LEVANTINE = PRESETS["levantine"]
EGYPTIAN = PRESETS["egyptian"]


def cards(text: str) -> list[str]:
    """`"AC 2D"` -> `["AC", "2D"]`; the empty string is no cards."""
    return text.split()


def rules_with(preset: str = "levantine", **overrides: Any) -> Rules:
    return Rules.from_json({"preset": preset, **overrides})


def state_json(
    rules: Rules,
    *,
    hands: Sequence[Iterable[str]],
    table: Iterable[str] = (),
    dealer: int,
    turn: int | None,
    stock_size: int = 0,
    stock: Iterable[str] | None = None,
    captured: Sequence[Iterable[str]] = ((), ()),
    filler_side: int = 1,
    basras: Sequence[Sequence[tuple[str, int]]] = ((), ()),
    last_capturer: int | None = None,
    scores: Sequence[int] = (0, 0),
    carry: int = 0,
    round_number: int = 1,
    status: str = "playing",
    winner: int | None = None,
    seed: str | None = "tests",
) -> dict[str, Any]:
    """The JSON of a state; unmentioned cards fill the stock (`stock` as given, else the
    first `stock_size` of them) and then `filler_side`'s pile. `last_capturer` defaults to
    a seat of a side that holds cards."""
    hands = [list(hand) for hand in hands]
    table = list(table)
    piles = [list(pile) for pile in captured]
    placed = {card for place in (*hands, table, *piles) for card in place}
    rest = [card for card in DECK if card not in placed]
    stock = rest[:stock_size] if stock is None else list(stock)
    rest = [card for card in rest if card not in stock]
    piles[filler_side] += rest
    if last_capturer is None:
        last_capturer = next((side for side, pile in enumerate(piles) if pile), None)
    data = {
        "game": "basra",
        "rules": rules.to_json(),
        "seats": len(hands),
        "dealer": dealer,
        "turn": turn,
        "hands": hands,
        "table": table,
        "stock": stock,
        "captured": piles,
        "basras": [[{"card": c, "points": p} for c, p in side] for side in basras],
        "last_capturer": last_capturer,
        "scores": list(scores),
        "carry": carry,
        "round": round_number,
        "status": status,
        "winner": winner,
    }
    if seed is not None:
        data["seed"] = seed
    return data


def build(rules: Rules, **fields: Any) -> State:
    return State.from_json(state_json(rules, **fields))


def single_play(rules: Rules, table: Iterable[str], hand: Iterable[str]) -> State:
    """Seat 0 leads a deal (dealer 1) holding `hand`; seat 1 holds as many cards, so the
    play is never the last card of the round; a deal of 8 waits in the stock."""
    hand = list(hand)
    table = list(table)
    placed = set(hand) | set(table)
    other = [card for card in reversed(DECK) if card not in placed][: len(hand)]
    return build(rules, hands=[hand, other], table=table, dealer=1, turn=0, stock_size=8)


def final_play(
    rules: Rules,
    *,
    seats: int = 2,
    dealer: int,
    card: str,
    table: Iterable[str] = (),
    captured: Sequence[Iterable[str]],
    last_capturer: int,
    **fields: Any,
) -> State:
    """The dealer holds `card`, the last card of the round: every other hand and the
    stock are empty. `captured` must place every other card of the pack."""
    hands: list[list[str]] = [[] for _ in range(seats)]
    hands[dealer] = [card]
    return build(
        rules, hands=hands, table=table, dealer=dealer, turn=dealer, captured=captured,
        last_capturer=last_capturer, **fields,
    )  # fmt: skip


def play_round_until(state: State, done) -> State:
    """Play the first legal move until `done(state)`; the moves themselves do not matter."""
    while not done(state):
        state, _ = apply(state, legal_moves(state)[0])
    return state


def positions(preset: str, seats: int, count: int, seed: str) -> list[State]:
    """`count` positions spread over a match played with random moves."""
    rng = random.Random(seed)
    state = new_game(Rules.from_json({"preset": preset}), seats, seed)
    found = []
    while state.turn is not None and len(found) < count:
        if rng.random() < 0.15:
            found.append(state)
        state, _ = apply(state, rng.choice(legal_moves(state)))
    return found
