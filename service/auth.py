"""The request's bearer token, for what reads it without requiring one (the rate limits'
key, the metrics token); the hosted sessions' own check, which answers 401, is in
service.hosted.tokens."""

import flask


def bearer_token() -> str | None:
    """The token of the request's `Authorization: Bearer <token>` header, None without one."""
    scheme, _, token = flask.request.headers.get("Authorization", "").strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
