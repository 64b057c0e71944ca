"""The request's bearer token, for what reads it without requiring one (the rate limits'
key, the metrics token); the hosted sessions' own check, which answers 401, is in
service.hosted.tokens."""



def bearer_of(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header's value, None without one."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
