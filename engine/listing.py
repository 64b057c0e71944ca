"""The moves a game listed last, so that applying one of them can trust it: every computer
player lists the moves, then applies one. A module of its own, compiled in the compiled
build (engine/game.py stays interpreted): there a game reads and sets `entry` as a field of a
C struct, and Bank's `remember` and `listed` are C calls."""

from typing import Any


class LastListing:
    """The moves listed last and the state they were listed for. A caller that lists and
    then applies one of them (every computer player) has it trusted on that very state
    instead of checked again; the state is held, so its identity cannot pass to another.
    Only a hint: a listing from elsewhere in between makes the next check the full one.
    A game's hot path may read and set `entry` itself, as `listed` and `remember` do: a
    Python call less for every move of a playout."""

    def __init__(self) -> None:
        # The state listed for and its moves, as a tuple the caller cannot change.
        self.entry: tuple[Any, tuple] = (None, ())

    def remember(self, state: Any, moves: list) -> list:
        """Note `moves` as listed for `state`; the moves."""
        self.entry = (state, tuple(moves))
        return moves

    def listed(self, state: Any, move: Any) -> bool:
        """Whether `move` is equal to one listed for this very state."""
        listed_for, moves = self.entry
        return listed_for is state and move in moves
