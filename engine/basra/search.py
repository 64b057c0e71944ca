"""What Basra's computer players know beyond the rules: a greedy order and a fast playout
of the rest of the round (engine/basra/hidden.py)."""

import random

from engine.basra import hidden
from engine.basra.moves import Move, write_move
from engine.basra.state import State, side_of


class BasraSearch:
    """Basra's search knowledge (engine/game.py `Search`)."""

    def move_value(self, state: State, move: Move) -> tuple[int, int, float]:
        """Best immediate points, then most cards taken (the played card included), then
        the least given up: lay or spend the card that is worth least kept (not 2C, TD, J,
        A, or a sweeping 7D when anything else will do)."""
        taken = len(move.capture) + 1 if move.capture else 0
        points = write_move(state, move)["points"]
        return points, taken, -hidden.hold_value(move.card, state.rules)

    def playout(
        self, state: State, move: Move, seat: int, rng: random.Random, noise: float
    ) -> float:
        return hidden.playout(state, move, side_of(seat), rng, noise)
