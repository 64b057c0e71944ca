"""Writes racing changes of a session's live record at the same version (spectator tokens
added, a seat present again): each is computed again on the session as stored, and answered,
on both stores."""

import contextlib

import pytest

from service.errors import Problem
from service.hosted.problems import StaleVersion
from service.hosted.records import MAX_SPECTATORS
from service.hosted.sessions import Sessions, checked_move
from tests.service.hosted.core_client import begin


def test_a_move_outlasts_every_spectator_token_added_while_it_is_computed(sessions: Sessions):
    """Each token added between the mover's read and its commit fails the move's
    compare-and-set on the live record, at the same version: the move is computed again, and
    applies once the places are all taken, rather than a 503 after a few lost rounds."""
    session_id, tokens = begin(sessions)
    mover = next(seat for seat, token in enumerate(tokens)
                 if sessions.read(session_id, token)["moves"])  # fmt: skip
    seen = sessions.read(session_id, tokens[mover])
    request = {"move": seen["moves"][0], "version": seen["version"]}
    added: list[dict[str, str]] = []

    def body_as_another_token_is_added() -> dict:
        with contextlib.suppress(Problem):  # 409 once all sixteen are taken
            added.append(sessions.add_spectator(session_id, tokens[1 - mover]))
        return request

    answer = sessions.move(session_id, tokens[mover], body_as_another_token_is_added, None)
    assert answer["version"] == 1
    assert len(added) == MAX_SPECTATORS
    assert sessions.read(session_id, tokens[1 - mover])["version"] == 1


def test_an_absent_seat_reads_itself_present_while_spectator_tokens_are_added(
    sessions: Sessions, clock, monkeypatch
):
    """Its read writes the seat present again, a compare-and-set on the live record as read:
    each token added after that read fails it, and the read tries again until it applies."""
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=1)
    absent = next(seat for seat, token in enumerate(tokens)
                  if sessions.read(session_id, token)["moves"])  # fmt: skip
    clock.now += 10
    sessions.timers.fire_due()
    assert sessions.read(session_id, tokens[1 - absent])["absent"] == [absent]
    authorized, adding, added = sessions.authorized, [], []

    def authorized_as_another_token_is_added(*args: object) -> tuple:
        found = authorized(*args)
        if not adding:  # the addition reads the session too, unhindered
            adding.append(True)
            with contextlib.suppress(Problem):
                added.append(sessions.add_spectator(session_id, tokens[1 - absent]))
            adding.clear()
        return found

    monkeypatch.setattr(sessions, "authorized", authorized_as_another_token_is_added)
    assert sessions.read(session_id, tokens[absent])["absent"] == []
    monkeypatch.undo()
    assert sessions.read(session_id, tokens[1 - absent])["absent"] == []
    assert len(added) == MAX_SPECTATORS


def test_a_late_move_that_loses_its_race_does_not_put_off_the_next_turn_timer(
    sessions: Sessions, clock
):
    """A move computed on a version that is no longer current (a retry checked on a
    process's stale copy) plans its own, later deadline before its compare-and-set fails:
    the timer of the seat really to move must still fire at that seat's deadline."""
    session_id, tokens = begin(sessions, turn_seconds=10)
    mover = next(seat for seat, token in enumerate(tokens)
                 if sessions.read(session_id, token)["moves"])  # fmt: skip
    first = sessions.commits.recent.get(session_id)
    seen = sessions.read(session_id, tokens[mover])
    request = {"move": seen["moves"][0], "version": 0}
    clock.now += 1
    assert sessions.move(session_id, tokens[mover], lambda: request, None)["version"] == 1
    clock.now += 8  # the other seat's deadline is 9 s ahead, its timer planned for then
    move = checked_move(first, mover, request)
    with pytest.raises(StaleVersion):
        sessions.commit_move(first, mover, move, "late", None)
    sessions.timers.fire_due()  # whatever it looks at now, nothing is due yet
    assert sessions.read(session_id, tokens[mover])["version"] == 1
    clock.now += 2.5  # half a second past the other seat's deadline
    sessions.timers.fire_due()
    assert sessions.store.load(session_id).version == 2  # fired by the scan: no read fires it
