"""Hidden information for computer players: a full state consistent with what one seat
knows.

A seat sees its own hand, the bank, the target, every captured pile, `out`, the hand sizes
and the stock size. The other hands, the stock's order and the seed are unseen, so
`determinize` reads only the known fields and deals the unseen cards at random: two states
that differ only in unseen cards give the same result. What the seat saw the others do is
kept too: a pass is legal only when nothing in hand beats the target, so the seats that
passed on the target in play are dealt no card that beats it.
"""

import random
from typing import cast

from engine.bank.cards import DECK
from engine.bank.moves import beaters
from engine.bank.state import State, Target
from engine.cards import canonical, redeal


def unseen_cards(state: State, seat: int) -> list[str]:
    """The cards `seat` cannot see, in canonical order."""
    seen = {*state.hands[seat], *(entry.card for entry in state.bank)}
    seen.update(card for pile in state.captured for card in pile)
    return [card for card in DECK if card not in seen]


# Shuffles tried for a deal that respects every pass before dealing without them: several
# seats that passed may leave few cards that all of them may hold.
DEAL_TRIES = 8


# Going out with these takes the bank at once, no pass needed (rules §8.2).
KING_FINISHES = ("trump_king", "four_kings")


def passers(state: State) -> list[int]:
    """The seats that passed on the target's card and hold the hand they passed with,
    latest first: the `idle` holders before the seat to move. A lay, a draw and a
    turned-up card reset `idle`, and a taken bank leaves its top card as the (virtual)
    target, so each of these passes was made on this very card with the hand the seat
    still holds. A virtual target reveals one pass more: the bank was taken on a pass of
    the holder before the mover, whose turn was the last before the mover's own, even
    when the mover's draw has since reset `idle` - unless the bank was taken by going out
    with a king (its taker laid the target, nobody passed on it)."""
    target = state.target
    if target is None or state.turn is None:
        return []
    holders = state.holders()
    if state.turn not in holders:
        return []
    count = min(state.idle, len(holders) - 1)
    if target.virtual and not taken_going_out(state):
        count = max(count, min(1, len(holders) - 1))
    at = holders.index(state.turn)
    return [holders[(at - back) % len(holders)] for back in range(1, count + 1)]


def taken_going_out(state: State) -> bool:
    """Whether the virtual target is the top card of a bank its taker took by going out
    with a trump king or four kings. A seat out that way laid no card still in play, so
    it can take no bank on a pass afterwards: holding the target's card, it took it then."""
    card = cast(Target, state.target).card  # virtual: a target there
    return any(
        entry.finish in KING_FINISHES and card in state.captured[entry.seat] for entry in state.out
    )


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """`state` with the other hands and the stock dealt at random from the unseen cards,
    every size kept, no card that beats the target in the hand of a seat that passed on it,
    and a fresh seed for later deals."""
    unseen = unseen_cards(state, seat)
    hands, stock = redeal(state.hands, seat, unseen, rng)
    barred = {
        passer: beaters(cast(Target, state.target).card, state.common, state.personal[passer])
        for passer in passers(state)
        if passer != seat
    }
    for _ in range(DEAL_TRIES if barred else 0):
        found = deal_around(state.hands, seat, unseen, barred)
        if found is not None:
            hands, stock = found
            break
        rng.shuffle(unseen)
    return state._replace(hands=hands, stock=stock, seed=f"determinized/{rng.getrandbits(64):016x}")


def deal_around(
    hands: tuple[tuple[str, ...], ...],
    keep: int,
    shuffled: list[str],
    barred: dict[int, frozenset[str]],
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]] | None:
    """The shuffled unseen cards dealt again in their order, first to each seat in `barred`
    from the cards it may hold (the seat with the fewest to spare first), then to the other
    seats but `keep`; what is left is the stock. None when some seat cannot be dealt its
    size from what the others left."""
    dealt: list[tuple[str, ...] | None] = [None] * len(hands)
    dealt[keep] = hands[keep]
    left = shuffled

    def spare(passer: int) -> int:
        return sum(card not in barred[passer] for card in shuffled) - len(hands[passer])

    for passer in sorted(barred, key=spare):
        cannot = barred[passer]
        allowed = [card for card in left if card not in cannot][: len(hands[passer])]
        if len(allowed) < len(hands[passer]):
            return None
        taken = set(allowed)
        dealt[passer] = canonical(allowed)
        left = [card for card in left if card not in taken]
    for other, hand in enumerate(hands):
        if dealt[other] is None:
            dealt[other] = canonical(left[: len(hand)])
            left = left[len(hand) :]
    return tuple(dealt), tuple(left)  # type: ignore[arg-type]
