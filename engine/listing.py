"""The moves a game listed last, so that applying one of them can trust it: every computer
player lists the moves, then applies one. A module of its own, compiled in the compiled
build (engine/game.py stays interpreted): there a game reads and sets `entry` as a field of a
C struct."""

from typing import Any


class LastListing:
    """The moves listed last and the state they were listed for, or the move read last for
    a state. A caller that lists and then applies one of them (every computer player), or
    reads a move and then applies it (a server), has it trusted on that very state instead
    of checked again; the state is held, so its identity cannot pass to another.
    Only a hint: a listing from elsewhere in between makes the next check the full one.
    A game's hot path reads and sets `entry` itself, not through a method: a Python call
    less for every move of a playout."""

    def __init__(self) -> None:
        # The state listed for and its moves, as a tuple the caller cannot change.
        self.entry: tuple[Any, tuple] = (None, ())

    def read(self, state: Any, move: Any) -> Any:
        """`move`, just read for `state` (a game's read_move), left here as listed for it:
        a server reads a move to name what is wrong with it, then applies it."""
        self.entry = (state, (move,))
        return move
