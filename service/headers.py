"""Headers every answer follows: CORS for browser clients on other origins (CORS_ORIGINS),
`Cache-Control: no-store` on the API's answers, which carry tokens, hands and states, and
X-Request-ID, the caller's or a fresh one."""

import re
import secrets
from collections.abc import Mapping
from typing import Any

import flask
from flask_cors import CORS

from service.hosted.tokens import TOKEN_SHAPED

# What a browser client must send beyond the CORS-safelisted headers, and read in answers.
ALLOWED_HEADERS = [
    "Authorization", "Content-Type", "Idempotency-Key", "If-None-Match", "Last-Event-ID",
    "X-Request-ID",
]  # fmt: skip
EXPOSED_HEADERS = ["ETag", "Location", "Retry-After", "WWW-Authenticate", "X-Request-ID"]
METHODS = ["GET", "POST", "DELETE"]
PREFLIGHT_SECONDS = 600
API_PREFIX = "/v1/"
# The API's one answer that is the same for everyone and says nothing secret.
PUBLIC = {"/v1/games"}
NO_STORE = "no-store"
ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?")
REQUEST_ID = "X-Request-ID"
REQUEST_ID_ENVIRON = "HTTP_X_REQUEST_ID"  # the header as WSGI passes it
# A caller's id is echoed only when it is short and printable: it lands in the access log.
# (Matched whole: `$` alone would also pass an id ending in a newline.)
GOOD_REQUEST_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


def request_id(environ: Mapping[str, Any]) -> str:
    """The request's id: the caller's X-Request-ID when it is short and printable and holds
    nothing shaped like a token (a client that sent its token as its id would have it
    logged), else 128 random bits in hex (a quarter of what uuid4 costs, the same form)."""
    given = environ.get(REQUEST_ID_ENVIRON, "")
    if GOOD_REQUEST_ID.fullmatch(given) and not TOKEN_SHAPED.search(given):
        return given
    return secrets.token_hex(16)


def no_store(path: str) -> bool:
    """Whether the answer at `path` must not be kept by any cache: every answer under /v1/
    but the catalogue."""
    return path.startswith(API_PREFIX) and path not in PUBLIC


def cors_origins(setting: str | None) -> str | list[str] | None:
    """CORS_ORIGINS as flask-cors takes it: "*", a list of origins, or None (off). An entry
    that is not an origin (`https://host[:port]`) is refused at start-up: flask-cors would
    read one with `*` or `[` as a regular expression."""
    if setting is None or not setting.strip():
        return None
    if setting.strip() == "*":
        return "*"
    origins = [origin.strip().rstrip("/") for origin in setting.split(",") if origin.strip()]
    for origin in origins:
        if not ORIGIN.fullmatch(origin):
            raise ValueError(
                f"CORS_ORIGINS: {origin!r} is not an origin like 'https://play.example:8443' "
                "(or set CORS_ORIGINS=* for any origin)"
            )
    return origins


def install_cors(app: flask.Flask, config: Mapping[str, Any]) -> None:
    """Cross-origin calls from the CORS_ORIGINS origins (off when unset). Tokens travel in
    the Authorization header, never in cookies: no credentials mode."""
    origins = cors_origins(config["CORS_ORIGINS"])
    if origins is None:
        return
    CORS(
        app,
        origins=origins,
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        methods=METHODS,
        max_age=PREFLIGHT_SECONDS,
        supports_credentials=False,
        send_wildcard=origins == "*",  # "*" itself, not the caller's origin echoed
    )


def install_no_store(app: flask.Flask) -> None:
    """`Cache-Control: no-store` on every answer under /v1/ but the catalogue: states hold
    every hand, session answers a seat's hand, creation its tokens; no cache may keep them."""

    @app.after_request
    def keep_out_of_caches(response: flask.Response) -> flask.Response:
        if no_store(flask.request.path):
            response.headers["Cache-Control"] = NO_STORE
        return response
