"""Basra behind the game protocol of engine/game.py."""

from engine.basra import hidden, moves, play, scoring
from engine.basra.rules import DEFAULT_PRESET, PRESETS, SEAT_COUNTS, Rules
from engine.basra.search import BasraSearch
from engine.basra.shapes import SHAPES
from engine.basra.state import MATCH_OVER, State, side_of
from engine.game import CardGame, MatchResult, Search, register, seat_view


class Basra(CardGame):
    """Basra for the registry: two seats, or two partnerships of two."""

    name = "basra"
    search: Search | None = BasraSearch()
    rules, presets, default_preset, seat_counts = Rules, PRESETS, DEFAULT_PRESET, SEAT_COUNTS
    state = State
    shapes = SHAPES

    deal = staticmethod(play.new_game)
    legal_moves = staticmethod(moves.legal_moves)
    playable_moves = staticmethod(moves.playable_moves)
    read_move = staticmethod(moves.read_move)
    write_move = staticmethod(moves.write_move)
    apply = staticmethod(play.apply)
    view = staticmethod(seat_view)
    score = staticmethod(scoring.score)
    determinize = staticmethod(hidden.determinize)

    def side_of(self, state: State, seat: int) -> int:
        return side_of(seat)

    def outcome(self, state: State) -> MatchResult | None:
        if state.status != MATCH_OVER:
            return None
        seats = range(state.seats)
        return MatchResult(
            winners=tuple(seat for seat in seats if side_of(seat) == state.winner),
            points=tuple(state.scores[side_of(seat)] for seat in seats),
        )


register(Basra())
