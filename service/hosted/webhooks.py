"""Webhooks: what a backend is told of its sessions, and how (Standard Webhooks).

A session created with a `webhook` keeps its URL, its event types and its secret in its
meta. Every commit computes, from its facts (service.hosted.commit.change_of), the messages
it causes, in version order: `session.timeout` for a move the server played for a seat,
`session.turn` when a human seat is left to move, `session.match_end` when the match ends.
They are written to the session's outbox by the same compare-and-set as the commit, so a
commit is never without its messages, nor a message without its commit. Each message holds
its own URL and secret, so that it is delivered even once its session is gone.

What a message says is public: seats, versions, deadlines, scores, and the seed only with
the end. Never a hand, a drawn card, the stock or a token.
"""

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from service.hosted.answers import rfc3339
from service.hosted.records import HUMAN

if TYPE_CHECKING:
    from service.hosted.commit import Facts

TURN, TIMEOUT, MATCH_END = "session.turn", "session.timeout", "session.match_end"
EVENTS = (TURN, TIMEOUT, MATCH_END)
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where a session's messages go, which ones, and the key they are signed with."""

    url: str
    events: tuple[str, ...]
    secret: str

    @classmethod
    def new(cls, url: str, events: list[str] | None) -> "Webhook":
        # [] reads as left out: OpenAPI Generator's java clients write a list left unset
        # as [], and a webhook sending nothing would be no webhook.
        chosen = tuple(e for e in EVENTS if e in events) if events else EVENTS
        secret = SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()
        return cls(url, chosen, secret)

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> "Webhook | None":
        if data is None:
            return None
        return cls(data["url"], tuple(data["events"]), data["secret"])

    def write(self) -> dict[str, Any]:
        return {"url": self.url, "events": list(self.events), "secret": self.secret}

    def shown(self) -> dict[str, Any]:
        """As answers after the creation's show it: never the secret."""
        return {"url": self.url, "events": list(self.events)}


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks `webhook-signature` of one attempt."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def messages_of(facts: "Facts", at: float) -> list[dict[str, Any]]:
    """The messages the commit causes, in version order (outbox items: id, url, secret,
    body, attempts, due)."""
    hook = Webhook.read(facts.after.meta.webhook)
    if hook is None:
        return []
    after = facts.after
    base = {"session_id": facts.session_id, "game": facts.game}
    said: list[tuple[str, int, dict[str, Any]]] = []
    # The versions the commit adds (and creation's version 0), each with the seat it
    # leaves to move: the next move's seat within the commit, the facts' to_move at its end.
    versions = [(facts.first_version, None)] if facts.created else []
    versions += [(moved.version, moved) for moved in facts.moved]
    for index, (version, moved) in enumerate(versions):
        last = index == len(versions) - 1
        if moved is not None and moved.by == "timeout":
            absent = bool(moved.events[0].get("absent")) or moved.seat in after.live.absent
            said.append((TIMEOUT, version, {"seat": moved.seat, "absent": absent}))
        mover = facts.to_move if last else versions[index + 1][1].seat
        if mover is not None and after.seats[mover].kind == HUMAN:
            deadline = rfc3339(facts.deadline) if last else None
            said.append((TURN, version, {"seat": mover, "deadline": deadline}))
    if facts.ended and facts.outcome is not None:
        seed = after.game.write(after.state).get("seed", "")
        said.append((MATCH_END, facts.version, {
            "winners": list(facts.outcome.winners),
            "scores": list(facts.outcome.points),
            "seed": seed,
            "commitment": hashlib.sha256(seed.encode()).hexdigest(),
        }))  # fmt: skip
    stamp = rfc3339(at)
    return [
        {
            "id": f"msg_{facts.session_id}_{facts.epoch}_{version}_{kind.removeprefix('session.')}",
            "url": hook.url,
            "secret": hook.secret,
            "body": orjson.dumps(
                {"type": kind, "timestamp": stamp, "data": {**base, "version": version, **data}}
            ).decode(),
            "attempts": 0,
            "due": at,
        }
        for kind, version, data in said
        if kind in hook.events
    ]
