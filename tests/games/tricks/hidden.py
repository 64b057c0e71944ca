"""Search over hidden cards: the other hands dealt again at random."""

import random

from engine.cards import redeal

from .state import State


def determinize(state: State, seat: int, rng: random.Random) -> State:
    unseen = sorted(
        card for other, hand in enumerate(state.hands) if other != seat for card in hand
    )
    hands, _ = redeal(state.hands, seat, unseen, rng)
    return state._replace(hands=hands)
