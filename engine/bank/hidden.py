"""Hidden information for computer players: a full state consistent with what one seat
knows.

A seat sees its own hand, the bank, the target, every captured pile, `out`, the hand sizes
and the stock size. The other hands, the stock's order and the seed are unseen, so
`determinize` reads only the known fields and deals the unseen cards at random: two states
that differ only in unseen cards give the same result.
"""

import random

from engine.bank.cards import DECK
from engine.bank.state import State
from engine.cards import redeal


def unseen_cards(state: State, seat: int) -> list[str]:
    """The cards `seat` cannot see, in canonical order."""
    seen = {*state.hands[seat], *(entry.card for entry in state.bank)}
    seen.update(card for pile in state.captured for card in pile)
    return [card for card in DECK if card not in seen]


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """`state` with the other hands and the stock dealt at random from the unseen cards,
    every size kept, and a fresh seed for later deals."""
    hands, stock = redeal(state.hands, seat, unseen_cards(state, seat), rng)
    return state._replace(
        hands=hands, stock=stock, seed=f"determinized/{rng.getrandbits(64):016x}"
    )
