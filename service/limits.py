"""Limits on what one request may cost: the body's size, whatever its framing."""

import io
from typing import Any

WSGIApp = Any  # a WSGI callable: (environ, start_response) -> iterable of bytes
READ_SIZE = 64 * 1024


class BoundedBody:
    """A WSGI middleware giving a chunked body (no Content-Length) the same limit as any
    other. Werkzeug cuts such a stream at MAX_CONTENT_LENGTH without a word, so an oversized
    chunked JSON body read as malformed JSON (400); here at most limit + 1 bytes are read
    and handed on with their length as Content-Length, so one byte over is Flask's own 413
    problem, exactly as for a body that announced its length."""

    def __init__(self, app: WSGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("CONTENT_LENGTH") or "HTTP_TRANSFER_ENCODING" not in environ:
            return self.app(environ, start_response)
        body = read_at_most(environ["wsgi.input"], self.limit + 1)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        del environ["HTTP_TRANSFER_ENCODING"]
        return self.app(environ, start_response)


def read_at_most(stream: Any, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        part = stream.read(min(left, READ_SIZE))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
