"""The hosted core driven without HTTP, for its tests: sessions begun, moves played, store
calls counted."""

from typing import Any

from service.hosted.sessions import Sessions

HUMANS = [{"type": "human"}, {"type": "human"}]


def bearer(token: str) -> str:
    return f"Bearer {token}"


def begin(sessions: Sessions, seats=HUMANS, seed: str = "core", **live) -> tuple[str, list[str]]:
    """A new Basra session (levantine) with these seats and live settings: its id and the
    human seats' Authorization headers, in seat order."""
    body = {"game": "basra", "rules": {"preset": "levantine"}, "seats": seats, "seed": seed}
    created = sessions.create({**body, **live}, None)
    return created["id"], [bearer(entry["token"]) for entry in created["seats"] if "token" in entry]


def play(sessions: Sessions, session_id: str, token: str) -> dict:
    """The seat's first legal move on the version it reads."""
    seen = sessions.read(session_id, token)
    move = seen["moves"][0]
    request = {
        "move": {"card": move["card"], "capture": move["capture"]},
        "version": seen["version"],
    }
    return sessions.move(session_id, token, lambda: request, None)


def counted(target: Any, name: str) -> list[tuple]:
    """Every call of `target.name` from now on (its arguments), the call itself unchanged."""
    calls: list[tuple] = []
    call = getattr(target, name)

    def counting(*args: Any) -> Any:
        calls.append(args)
        return call(*args)

    setattr(target, name, counting)
    return calls
