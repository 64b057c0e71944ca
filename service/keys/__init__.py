"""Integrator keys: who may create hosted sessions, and whose sessions they are.

`API_KEYS` lists the integrators as comma-separated `name:digest` entries, `digest` the
lowercase hex SHA-256 of the integrator's key; no key is ever kept in clear, and a key is
compared with every digest in constant time. Without `API_KEYS` creation is open (the
embedded default).

    python -m service.keys new NAME

prints a fresh random key (260 bits) once, and the entry to add to `API_KEYS`.
"""

import hmac
import re
from dataclasses import dataclass

from service.hosted.tokens import TOKEN_LENGTH, Unauthorized, bearer_token, digest, random_text

PREFIX = "key_"  # tells a key from a seat or spectator token at a glance
NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
DIGEST = re.compile(r"[0-9a-f]{64}")


def new_key() -> str:
    """A fresh integrator key: 260 random bits."""
    return PREFIX + random_text(TOKEN_LENGTH)


@dataclass(frozen=True, slots=True)
class Integrators:
    """The configured integrators: (name, digest of its key) pairs."""

    entries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> "Integrators":
        """`API_KEYS` read; a malformed entry stops the service from starting (a typo must
        not open creation to all, or lock every integrator out, silently)."""
        entries = []
        for entry in (text or "").split(","):
            if not entry.strip():
                continue
            name, _, kept = entry.strip().partition(":")
            if not NAME.fullmatch(name) or not DIGEST.fullmatch(kept):
                raise ValueError(
                    "API_KEYS: each entry must be 'name:digest', name 1 to 64 of A-Z a-z 0-9 . "
                    "_ -, digest the lowercase hex SHA-256 of the key (python -m service.keys "
                    "new NAME)"
                )
            entries.append((name, kept))
        return cls(tuple(entries))

    @property
    def required(self) -> bool:
        """Whether creating a session needs a key (API_KEYS is set)."""
        return bool(self.entries)

    def owner_of_key(self, key: str) -> str | None:
        """The integrator whose key this is, None for none; every digest is compared, in
        constant time."""
        wanted = digest(key)
        found = None
        for name, kept in self.entries:
            if hmac.compare_digest(kept, wanted):
                found = name
        return found

    def integrator(self, authorization: str | None) -> str:
        """The integrator an `Authorization: Bearer <key>` header names; 401 otherwise (a
        seat or spectator token included: a token is never a key)."""
        owner = self.owner_of_key(bearer_token(authorization, "integrator key"))
        if owner is None:
            raise Unauthorized(
                "the bearer token is not a configured integrator key", "invalid_token"
            )
        return owner
