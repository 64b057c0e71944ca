"""Bank behind the game protocol of engine/game.py."""

from typing import Any

from engine.bank import hidden, moves, play, scoring
from engine.bank.moves import Move
from engine.bank.rules import DEFAULT_PRESET, PRESETS, SEAT_COUNTS, Rules
from engine.bank.search import BankSearch
from engine.bank.shapes import SHAPES
from engine.bank.state import MATCH_OVER, State
from engine.game import CardGame, Events, MatchResult, Search, register, seat_view


class Bank(CardGame):
    """Bank for the registry: every player is its own side."""

    name = "bank"
    search: Search | None = BankSearch()
    rules, presets, default_preset, seat_counts = Rules, PRESETS, DEFAULT_PRESET, SEAT_COUNTS
    state = State
    shapes = SHAPES

    deal = staticmethod(play.new_game)
    legal_moves = staticmethod(moves.legal_moves)
    read_move = staticmethod(moves.read_move)
    apply = staticmethod(play.apply)
    view = staticmethod(seat_view)
    score = staticmethod(scoring.score)
    determinize = staticmethod(hidden.determinize)

    def write_move(self, state: State, move: Move) -> dict[str, Any]:
        return moves.write_move(move)

    def events_for(self, events: Events, seat: int | None) -> Events:
        """Everything is public but the card another seat draws (a spectator sees none)."""
        return [
            {**event, "card": None}
            if event["type"] == "draw" and (seat is None or event["seat"] != seat)
            else event
            for event in events
        ]

    def outcome(self, state: State) -> MatchResult | None:
        if state.status != MATCH_OVER:
            return None
        return MatchResult(winners=state.winners, points=state.scores)


register(Bank())
