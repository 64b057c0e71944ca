"""Hidden information for computer players: a full state consistent with what one seat
knows, and a fast playout of the rest of the round.

The seat knows its own hand, the table, every captured pile and basra, the hand sizes and
the stock size. Everything else (the other hands, the stock order, the seed that deals
later rounds) is unseen, so `determinize` reads only the known fields and deals the unseen
cards at random: two states that differ only in unseen cards give the same result.
"""

import random
from dataclasses import replace
from functools import lru_cache

from engine.basra.cards import DECK, VALUE
from engine.basra.moves import (
    Move,
    TooManyMoves,
    card_moves,
    clears_as_some_rank,
    is_final_card,
    sweeps,
)
from engine.basra.play import deal_hands
from engine.basra.rules import Rules
from engine.basra.scoring import card_points, score
from engine.basra.state import SIDES, State, side_of
from engine.cards import redeal

# Playout policy weights: one card towards the majority is worth about a point (30 points
# for 27 of 52 cards), leaving the next seat a table it can clear risks a basra.
CARD_WEIGHT = 1.0
DANGER_WEIGHT = 6.0
SWEEPER_HOLD = 3.0


def unseen_cards(state: State, seat: int) -> list[str]:
    """The cards `seat` cannot see, in canonical order."""
    seen = {*state.hands[seat], *state.table, *(card for pile in state.captured for card in pile)}
    return [card for card in DECK if card not in seen]


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """A full state `seat` cannot tell from `state`: its hand, the table, piles, basras,
    hand sizes and stock size kept; unseen cards dealt at random to the other hands and
    the stock; a fresh seed for later rounds."""
    hands, stock = redeal(state.hands, seat, unseen_cards(state, seat), rng)
    return state._replace(hands=hands, stock=stock, seed=f"determinized/{rng.getrandbits(64):016x}")


POINTS = {card: card_points((card,)) for card in DECK}
NO_POINTS = dict.fromkeys(DECK, 0)


def hold_value(card: str, rules: Rules) -> float:
    """What a card is worth keeping in hand rather than laying it: its card points and,
    for a jack or a sweeping seven of diamonds, the power to take a whole table."""
    worth = POINTS[card] if rules.card_points else 0
    return worth + (SWEEPER_HOLD if sweeps(card, rules) else 0.0)


def danger(table: tuple[str, ...] | list[str], rules: Rules) -> bool:
    """Whether some single card could clear this table for a basra."""
    if not table:
        return False
    sweep_max = rules.seven_diamonds_basra_max_sum if rules.seven_diamonds_mode == "sweep" else 0
    ranks = "".join(sorted(card[0] for card in table))
    return rank_danger(ranks, rules.jack_basra_points > 0, sweep_max)


@lru_cache(maxsize=1 << 16)
def rank_danger(ranks: str, jack_basra: bool, sweep_max: int) -> bool:
    """danger() on the table's ranks (suits do not matter to it), memoised."""
    if len(ranks) == 1:
        return ranks != "J" or jack_basra
    cards = tuple(rank + "C" for rank in ranks)
    numerals = all(VALUE[card] for card in cards)
    if numerals and sum(VALUE[card] for card in cards) <= sweep_max:
        return True
    return clears_as_some_rank(cards)


def move_worth(
    move: Move, table: list[str] | tuple[str, ...], rules: Rules, points: dict[str, int]
) -> float:
    """The playout policy's score of a move: points now, cards towards the majority,
    scoring cards kept, and no easy basra left to the next seat."""
    if move.capture:
        worth = move.basra_points + CARD_WEIGHT * (len(move.capture) + 1) + points[move.card]
        for card in move.capture:
            worth += points[card]
        left = [card for card in table if card not in move.capture]
    else:
        worth = -hold_value(move.card, rules)
        left = [*table, move.card]
    return worth - (DANGER_WEIGHT if danger(left, rules) else 0.0)


def policy_move(
    hand: list[str] | tuple[str, ...],
    table: list[str] | tuple[str, ...],
    rules: Rules,
    final: bool,
    rng: random.Random,
    noise: float,
) -> Move:
    """The playout policy's choice: the move of greatest `move_worth` plus up to `noise`
    points of chance, drawn once per move in hand order."""
    worth_of = POINTS if rules.card_points else NO_POINTS
    best = None
    best_worth = 0.0
    frozen = tuple(table)
    for card in hand:
        for option in policy_options(card, frozen, rules, final):
            worth = move_worth(option, table, rules, worth_of) + noise * rng.random()
            if best is None or worth > best_worth:
                best, best_worth = option, worth
    assert best is not None, "the mover holds a card"
    return best


def policy_options(card: str, table: tuple[str, ...], rules: Rules, final: bool) -> list[Move]:
    """The card's moves the playout policy weighs: all of them, or, under `any_family` on a
    table whose captures are too many to list, its captures of most cards (covers too, so
    legal) and its lay: a sampled hand may hold a card that the seat's own listing never met."""
    try:
        return card_moves(card, table, rules, final)
    except TooManyMoves:
        return card_moves(card, table, replace(rules, capture_policy="max_cards"), final)


def playout(
    state: State, move: Move | None, side: int, rng: random.Random, noise: float
) -> float:
    """Play `move` (None: the policy's choice), then the rest of the round with the playout
    policy for every seat; the round's point difference for `side` (its total minus the
    best other total), scored by the rules' own end of round. `noise` (in points)
    randomises the policy's choices."""
    rules = state.rules
    seats = state.seats
    hands = [list(hand) for hand in state.hands]
    table = list(state.table)
    stock = list(state.stock)
    piles = [list(pile) for pile in state.captured]
    basras = [list(records) for records in state.basras]
    last = state.last_capturer
    turn = state.turn
    assert turn is not None, "a seat is to move while the match is played"
    per_deal = rules.hand_size * seats
    final = is_final_card(state)
    while True:
        hand = hands[turn]
        if move is None:
            move = policy_move(hand, table, rules, final, rng, noise)
        hand.remove(move.card)
        if move.capture:
            taken = set(move.capture)
            table = [card for card in table if card not in taken]
            mover = side_of(turn)
            piles[mover] += (*move.capture, move.card)
            if move.basra:
                basras[mover].append((move.card, move.basra_points))
            last = turn
        else:
            table.append(move.card)
        move = None
        turn = (turn + 1) % seats
        if not hand and not any(hands):
            if not stock:
                break
            hands = [list(h) for h in deal_hands(tuple(stock[:per_deal]), seats, state.dealer)]
            stock = stock[per_deal:]
            turn = (state.dealer + 1) % seats
        final = not stock and sum(map(len, hands)) == 1
    played_out = state._replace(
        hands=((),) * seats, stock=(), table=tuple(table), last_capturer=last,
        captured=tuple(map(tuple, piles)), basras=tuple(map(tuple, basras)),
    )  # fmt: skip
    totals = [side_score["total"] for side_score in score(played_out)]
    return float(totals[side] - max(totals[other] for other in range(SIDES) if other != side))
