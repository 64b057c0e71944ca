"""Writes racing changes of a session's live record at the same version (spectator tokens
added, a seat present again): each is computed again on the session as stored, and answered,
on both stores."""

import contextlib

from service.errors import Problem
from service.hosted.records import MAX_SPECTATORS
from service.hosted.sessions import Sessions
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
