"""A game may refuse to list a position's moves for their number (engine.errors.TooLarge,
as Basra's any_family does on a crowded table) while its rules still take a move named
there. Hosted, that position must stay playable: the seat to move reads the session (its
`moves` empty) and moves itself; the server, which cannot choose a move without a listing,
stops its play there instead of refusing the move that led to it, and a timer that cannot
be played stops instead of failing every read and scan. Tricks (tests/games/tricks) whose
listing is refused once a trick is led."""

import pytest

from engine.errors import TooLarge
from engine.game import get_game
from tests.service.hosted.core_client import bearer
from tests.service.new_game import tricks_registered

HUMANS = [{"type": "human"}, {"type": "human"}]


@pytest.fixture(autouse=True)
def unlisted():
    """Tricks, its listing refused when a trick has been led (its rules still read a move)."""
    with tricks_registered(), pytest.MonkeyPatch.context() as patch:
        tricks = type(get_game("tricks"))
        listing = tricks.legal_moves

        def legal_moves(state):
            if state.trick:
                raise TooLarge("state.trick", "too many moves to list")
            return listing(state)

        patch.setattr(tricks, "legal_moves", staticmethod(legal_moves))
        yield


def begin(sessions, seats, **live) -> tuple[str, dict[int, str]]:
    body = {"game": "tricks", "seats": seats, "seed": "unlisted", **live}
    created = sessions.create(body, None)
    humans = [entry for entry in created["seats"] if "token" in entry]
    return created["id"], {entry["seat"]: bearer(entry["token"]) for entry in humans}


def lead(sessions, session_id: str, token: str) -> dict:
    seen = sessions.read(session_id, token)
    request = {"move": seen["moves"][0], "version": seen["version"]}
    return sessions.move(session_id, token, lambda: request, None)


def answer(sessions, session_id: str, token: str, version: int) -> dict:
    """The second card of the trick, named without a listing: one of the suit led if the
    hand has one (Tricks' rule), else any."""
    view = sessions.read(session_id, token)["view"]
    led = view["trick"][0][1]
    card = next((card for card in view["hand"] if card[1] == led), view["hand"][0])
    request = {"move": {"card": card}, "version": version}
    return sessions.move(session_id, token, lambda: request, None)


def test_the_seat_to_move_reads_the_session_and_moves_without_a_listing(sessions):
    session_id, tokens = begin(sessions, HUMANS)
    lead(sessions, session_id, tokens[0])
    seen = sessions.read(session_id, tokens[1])
    assert seen["view"]["turn"] == 1 and seen["moves"] == []
    moved = answer(sessions, session_id, tokens[1], seen["version"])
    assert moved["version"] == 2


@pytest.mark.parametrize("level", ["random", "greedy", "expert"])
def test_a_bot_that_cannot_list_its_moves_stops_server_play(sessions, level):
    session_id, tokens = begin(sessions, [{"type": "human"}, {"type": "bot", "level": level}])
    moved = lead(sessions, session_id, tokens[0])  # the bot's turn: its moves are unlisted
    assert moved["version"] == 1 and moved["view"]["turn"] == 1
    assert moved["deadline"] is None
    seen = sessions.read(session_id, tokens[0])
    assert seen["version"] == 1 and seen["view"]["turn"] == 1


def test_a_timer_the_server_cannot_play_stops_and_the_seat_keeps_its_turn(sessions, clock):
    session_id, tokens = begin(sessions, HUMANS, turn_seconds=10)
    lead(sessions, session_id, tokens[0])
    clock.now += 10
    sessions.timers.fire_due()  # due, but no move to play: its timer stops
    seen = sessions.read(session_id, tokens[1])
    assert seen["version"] == 1 and seen["deadline"] is None and seen["moves"] == []
    assert sessions.read(session_id, tokens[0])["version"] == 1  # a reader fires nothing more
    assert answer(sessions, session_id, tokens[1], 1)["version"] == 2
