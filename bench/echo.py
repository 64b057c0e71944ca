"""The HTTP floor the stateless API is measured against: a bare Flask app that parses each
JSON body with orjson and writes it back, and does nothing else (no schema, no hooks, no
metrics, no access log). bench.http serves it with gunicorn in the service's own worker
shape (worker class, threads, connections, workers, keep-alive, read from gunicorn.conf.py),
beside the service: `gunicorn -c /dev/null -k gevent ... bench.echo:app`."""

import flask
import orjson

app = flask.Flask(__name__)


@app.post("/echo")
def echo() -> flask.Response:
    """The body parsed and written back."""
    body = orjson.dumps(orjson.loads(flask.request.get_data()))
    return flask.Response(body, mimetype="application/json")


@app.get("/livez")
def livez() -> flask.Response:
    """200 once the worker serves (the benchmark waits for it)."""
    return flask.Response(b"ok", mimetype="text/plain")
