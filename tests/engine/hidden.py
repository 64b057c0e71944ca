"""Hidden cards moved around, for the bots' tests of what a seat cannot see."""

import random
from typing import Any


def hidden_shuffle(state: Any, seat: int, rng: random.Random) -> Any:
    """The same state as `seat` sees it, with every card it cannot see (the other hands and
    the stock, when the game has one) moved around and another seed. Written apart from the
    engines' own redeal: a test must not check `determinize` with itself."""
    stock = getattr(state, "stock", None)
    unseen = [*(c for s, hand in enumerate(state.hands) if s != seat for c in hand), *(stock or ())]
    rng.shuffle(unseen)
    hands = []
    for other, hand in enumerate(state.hands):
        if other == seat:
            hands.append(hand)
        else:
            hands.append(tuple(sorted(unseen[: len(hand)])))
            unseen = unseen[len(hand) :]
    more = {} if stock is None else {"stock": tuple(unseen)}
    return state._replace(hands=tuple(hands), seed="another seed", **more)
