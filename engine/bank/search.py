"""What Bank's computer players know beyond the rules: a greedy order of moves that reads
only what the mover sees, and a fast playout of the rest of the deal.

Points come from banks taken (a card the next seat cannot beat takes the bank when that
seat passes), from going out (the bonus), and from not being the loser left holding points.
So a good lay is a card the answering seat is unlikely to beat on top of a rich bank; a card
that beats many cards (a trump, a six) is worth keeping for later; an eight is the way out
of a pass that would hand a bank to another seat; and every card shed is a step towards
going out. The playout policy weighs moves the same way, but knows the hands of the world
it plays in, so it can tell exactly whether the answering seat holds a beater.
"""

import random
from collections.abc import Callable
from functools import lru_cache
from typing import cast

from engine.bank.cards import DECK, EIGHT, POINTS, RANK, SEVEN
from engine.bank.moves import (
    LAY,
    PASS,
    QUAD,
    RUN,
    Move,
    beaters,
    beating_cards,
    legal_moves,
)
from engine.bank.play import apply, finish_of, next_holder
from engine.bank.state import BONUS, State

# The expert's deals per decision; a forced move gets one playout, for its value alone.
# A count, not a time, so a decision depends on its seed alone: 40 deals keep the median
# decision with a real choice near 30-40 ms of CPU on the shared build machine (the 50 ms
# budget, bench.bots), and won 73 % of 400 matches against greedy where 16 won 67 %.
ITERATIONS = 40

# Policy weights, in points. A card shed is a step towards the going-out bonus (20 or more)
# and out of reach of the loser's penalty.
SHED = 2.0
# What keeping a card that beats everything is worth (scaled by the share of the pack a card
# beats): trumps and sixes keep answers in hand.
HOLD = 4.0
# Per card point shed: the loser pays the points left in its hand.
RELIEF = 3.0

EIGHTS = frozenset(card for card in DECK if RANK[card] == EIGHT)
# The chance that a seat fails to answer `card` (laid on top by another seat).
Miss = Callable[[State, int, str], float]


@lru_cache(maxsize=4096)
def reach(card: str, common: tuple[int, ...], own_trump: str | None) -> float:
    """The share of the other 35 cards `card` beats for a seat with that trump."""
    beaten = sum(
        1 for target in DECK if target != card and card in beaters(target, common, own_trump)
    )
    return beaten / (len(DECK) - 1)


def hold_value(state: State, seat: int, card: str) -> float:
    """What `card` is worth kept in `seat`'s hand as a future answer."""
    return HOLD * reach(card, state.common, state.personal[seat])


def answerer(state: State, seat: int, card: str) -> int:
    """The seat that must answer `card` when `seat` ends its turn with it on top: the next
    holder, or the one after it when a seven makes the next holder miss its turn."""
    after = next_holder(state.hands, seat)
    if RANK[card] == SEVEN and state.rules.after_seven in ("skip", "skip_and_draw"):
        after = next_holder(state.hands, after)
    return after


def bank_points(state: State) -> int:
    return sum(POINTS[entry.card] for entry in state.bank)


def given_away(state: State, seat: int) -> int:
    """The bank's points that another seat takes if `seat` passes now."""
    target = state.target
    if target is None or target.virtual or target.by == seat or len(state.bank) < 2:
        return 0
    return bank_points(state)


def immediate(state: State, move: Move) -> int:
    """The points the move changes between its mover and the others at once: the bonus of
    going out and a bank a trump king or four kings take; a pass that lets another seat
    take the bank counts against the mover."""
    seat = state.turn
    assert seat is not None, "a move has a seat to make it"
    if move.type == PASS:
        return -given_away(state, seat)
    if len(move.cards) < len(state.hands[seat]) or move.type not in (LAY, QUAD, RUN):
        return 0
    finish = finish_of(move, state.common, state.personal[seat])
    points = BONUS[finish][len(state.out)]
    if finish in ("trump_king", "four_kings"):
        points += bank_points(state) + sum(POINTS[card] for card in move.cards)
    return points


def outlook(state: State, move: Move, miss: Miss) -> float:
    """The move's worth beyond its immediate points: the bank its top card may take, the
    cards and points it sheds, the answers it gives up, and for an eight or a quad the bank
    it keeps from the seat that would take it on a pass."""
    seat = state.turn
    assert seat is not None, "a move has a seat to make it"
    cards = move.cards
    if not cards or len(cards) == len(state.hands[seat]):
        return 0.0
    top = cards[-1]
    laid = sum(POINTS[card] for card in cards)
    worth = SHED * len(cards) + RELIEF * laid
    worth -= sum(hold_value(state, seat, card) for card in cards)
    if move.type == QUAD or (move.type == LAY and RANK[top] == EIGHT):
        # A follow-up is owed: the mover answers its own card, or draws and passes leaving
        # it on top, which keeps the bank from the seat that would take it on a pass now.
        if not any(card in beating_cards(state) for card in state.hands[seat]):
            worth += given_away(state, seat)
        return worth
    after = answerer(state, seat, top)
    if after == seat:
        return worth
    if len(state.bank) + len(cards) >= 2:
        worth += miss(state, after, top) * (bank_points(state) + laid)
    return worth


def seen_by(state: State, seat: int) -> frozenset[str]:
    """The cards `seat` can see: its hand, the bank and every captured pile."""
    seen = {*state.hands[seat], *(entry.card for entry in state.bank)}
    seen.update(card for pile in state.captured for card in pile)
    return frozenset(seen)


@lru_cache(maxsize=4096)
def answers(card: str, common: tuple[int, ...], own_trump: str | None) -> frozenset[str]:
    """The cards that keep a seat from passing against `card`: its beaters, and the eights
    (laid freely, they leave the seat's own card on top)."""
    return beaters(card, common, own_trump) | EIGHTS


def guessed_miss(state: State, after: int, card: str) -> float:
    """The chance that `after` holds no answer to `card` among its hand and the card it may
    draw, the unseen cards being dealt at random (all the mover can know)."""
    seen = seen_by(state, cast(int, state.turn))  # a seat: a move is being weighed
    answering = answers(card, state.common, state.personal[after])
    unseen = len(DECK) - len(seen)
    hits = sum(1 for other in answering if other not in seen)
    draws = min(len(state.hands[after]) + (1 if state.stock else 0), unseen)
    chance = 1.0
    for drawn in range(draws):
        chance *= max(0, unseen - hits - drawn) / (unseen - drawn)
    return chance


def known_miss(state: State, after: int, card: str) -> float:
    """1 when `after` holds no answer to `card` in hand nor in the stock's next card, else 0:
    a playout knows the world it plays in."""
    answering = answers(card, state.common, state.personal[after])
    if any(held in answering for held in state.hands[after]):
        return 0.0
    return 0.0 if state.stock and state.stock[0] in answering else 1.0


def choose(state: State, rng: random.Random, noise: float) -> Move:
    """The playout policy: the legal move of greatest worth, `noise` points of chance added."""
    moves = legal_moves(state)
    if len(moves) == 1:
        return moves[0]
    best = moves[0]
    best_worth = None
    for move in moves:
        worth = immediate(state, move) + outlook(state, move, known_miss) + noise * rng.random()
        if best_worth is None or worth > best_worth:
            best, best_worth = move, worth
    return best


class BankSearch:
    """Bank's search knowledge for engine/bots: the greedy order, the deal playout and the
    expert's budget."""

    def iterations(self, moves: int) -> int:
        """Deals sampled for a decision among `moves` legal moves."""
        return ITERATIONS if moves > 1 else 1

    def move_value(self, state: State, move: Move) -> tuple[int, float]:
        """The points the move changes at once (going out, a bank taken by a trump king, a
        bank a pass hands over), then its outlook (`outlook`) judged from what the mover
        sees: the unseen cards are equally likely to be anywhere."""
        return immediate(state, move), outlook(state, move, guessed_miss)

    def playout(
        self, state: State, move: Move, seat: int, rng: random.Random, noise: float
    ) -> float:
        """Play `move`, then the rest of the deal with the playout policy for every seat;
        the deal's total for `seat` minus the best other seat's, as the rules score the
        deal's end."""
        # Nobody is to move once the deal is over: scored, and the next deal not dealt.
        state, events = apply(state, move, deal_next=False)
        while state.turn is not None:
            state, events = apply(state, choose(state, rng, noise), deal_next=False)
        totals = next(event["sides"] for event in events if event["type"] == "deal_end")
        mine = totals[seat]["total"]
        return float(
            mine - max(side["total"] for other, side in enumerate(totals) if other != seat)
        )
