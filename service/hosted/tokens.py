"""Identity: session ids, seat and spectator tokens, their digests, the bearer header.

Tokens are random, kept only as their SHA-256 digests and compared in constant time (the
one answer that must give them again, a creation's to a retry under its Idempotency-Key, is
kept sealed under that key: `sealed`). Ids and
tokens avoid the suit letters C, D, H and S in either case, so no card name can ever appear
inside one: a byte scan of what a seat receives finds cards only as cards.
"""

import base64
import hashlib
import hmac
import re
import secrets

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from service.errors import KINDS, Problem, Unprocessable, invalid

ALPHABET = "0123456789abefgijklmnopqrtuvwxyz"
TOKEN_LENGTH = 52  # 260 bits
ID_LENGTH = 26  # 130 bits
ISSUED_ID = re.compile(f"[{ALPHABET}]{{{ID_LENGTH}}}")
# A token's shape (an integrator's key holds one after its prefix), wherever it stands.
TOKEN_SHAPED = re.compile(f"[{ALPHABET}]{{{TOKEN_LENGTH}}}")
MAX_KEY_LENGTH = 255
AUTH_SCHEME = "bearer"


class Unauthorized(Problem):
    def __init__(self, detail: str, error: str | None = None) -> None:
        challenge = 'Bearer realm="cards"' + (f', error="{error}"' if error else "")
        super().__init__(401, detail, headers={"WWW-Authenticate": challenge})


def random_text(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_id() -> str:
    return random_text(ID_LENGTH)


def new_token() -> str:
    return random_text(TOKEN_LENGTH)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cipher_of(key: str) -> AESGCM:
    """AES-256-GCM under a key derived from an Idempotency-Key: not from its digest, which
    is what the store keeps the sealed text under (another preimage, another hash)."""
    return AESGCM(hashlib.sha256(b"cards-sealed-answer\0" + key.encode()).digest())


def sealed(text: str, key: str) -> str:
    """`text` (an answer holding tokens) encrypted and authenticated under the
    Idempotency-Key `key`, for the store: only a retry that presents the key opens it."""
    nonce = secrets.token_bytes(12)
    return base64.b64encode(nonce + cipher_of(key).encrypt(nonce, text.encode(), None)).decode()


def opened(text: str, key: str) -> str | None:
    """What `sealed` sealed under `key`; None when `key` is not the one it was sealed under
    (or the text was changed). A JSON text is one kept before answers were sealed."""
    if text.startswith("{"):
        return text
    data = base64.b64decode(text)
    try:
        return cipher_of(key).decrypt(data[:12], data[12:], None).decode()
    except InvalidTag:
        return None


def fingerprint(*parts: object) -> str:
    """The digest of a request, to tell a retry from a different request under one key."""
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def issued(session_id: str) -> bool:
    """Whether this service could have issued the id (others are never looked up, nor used
    in a key name)."""
    return ISSUED_ID.fullmatch(session_id) is not None


def without_tokens(text: str) -> str:
    """`text` (what a client sent and a log writes: a query string, a user agent) with
    whatever has a token's shape hidden: a careless client puts its token anywhere."""
    return TOKEN_SHAPED.sub("<hidden>", text)


def bearer_token(authorization: str | None, what: str = "seat or spectator token") -> str:
    """The token of an `Authorization: Bearer <token>` header; 401 without one (`what`
    says what the call takes)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if not authorization:
        raise Unauthorized(f"this call needs 'Authorization: Bearer <{what}>'")
    if scheme.lower() != AUTH_SCHEME or not token.strip():
        raise Unauthorized(f"the Authorization header must be 'Bearer <{what}>'", "invalid_request")
    return token.strip()


def holder_of(
    seat_digests: tuple[str | None, ...], spectators: tuple[str, ...], token: str
) -> int | None:
    """The seat whose token this is, None for a spectator token (401 for neither); every
    digest is compared, in constant time."""
    wanted = digest(token)
    found, watching = None, False
    for seat, kept in enumerate(seat_digests):
        if hmac.compare_digest(kept or "", wanted):
            found = seat
    for spectator in spectators:
        watching |= hmac.compare_digest(spectator, wanted)
    if found is None and not watching:
        raise Unauthorized(
            "the token is not a seat or spectator token of this session", "invalid_token"
        )
    return found


def checked_key(key: str | None) -> str | None:
    """An Idempotency-Key as sent, when it has an acceptable length."""
    if key is not None and not 0 < len(key) <= MAX_KEY_LENGTH:
        raise invalid("Idempotency-Key", f"must be 1 to {MAX_KEY_LENGTH} characters")
    return key


def key_reused() -> Unprocessable:
    return invalid(
        "Idempotency-Key",
        "already used for a different request; use a fresh key for this one",
        kind=KINDS["idempotency-key-reused"],
    )
