"""Tricks behind the game protocol: the base does the boilerplate."""

from engine.game import CardGame, MatchResult, register

from . import hidden, moves, play, scoring
from .rules import DEFAULT_PRESET, PRESETS, SEAT_COUNTS, Rules
from .shapes import SHAPES
from .state import State


class Tricks(CardGame):
    name = "tricks"
    rules, presets, default_preset, seat_counts = Rules, PRESETS, DEFAULT_PRESET, SEAT_COUNTS
    state = State
    shapes = SHAPES

    deal = staticmethod(play.new_game)
    legal_moves = staticmethod(moves.legal_moves)
    read_move = staticmethod(moves.read_move)
    write_move = staticmethod(moves.write_move)
    apply = staticmethod(play.apply)
    view = staticmethod(play.view)
    score = staticmethod(scoring.score)
    determinize = staticmethod(hidden.determinize)

    def standing(self, state: State) -> list[float]:
        return [float(side["total"]) for side in scoring.score(state)]

    def outcome(self, state: State) -> MatchResult | None:
        if state.turn is not None:
            return None
        points = tuple(side["total"] for side in scoring.score(state))
        best = max(points)
        return MatchResult(tuple(s for s, p in enumerate(points) if p == best), points)


register(Tricks())
