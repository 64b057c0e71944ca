"""docs/operations.md's tables (settings, metrics, Redis keys) against the code, and a few
of the behaviours it documents on real gunicorn (the shipped gunicorn.conf.py), as an
operator would set them in the environment."""

import re
import time
from pathlib import Path

import pytest
import requests

from service.config import SETTINGS
from service.store import redis_store
from tests.gunicorn_server import Gunicorn, gunicorn

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \| ([^|]*) \|", re.MULTILINE)
# gunicorn.conf.py's own settings: setting("NAME", "default", ...) and os.environ.get(...).
READ_BY_GUNICORN = re.compile(
    r"""(?:setting|os\.environ\.get)\(["']([A-Z_]+)["'](?:, ["']([^"']*)["'])?"""
)


def documented() -> dict[str, str]:
    """Each setting of the operations page's table: its default, as the table writes it."""
    text = (ROOT / "docs" / "operations.md").read_text()
    table = text.split("## Configuration", 1)[1].strip().split("\n\n", 1)[0]
    rows = {}
    for names, default in ROW.findall(table):
        names = re.findall(r"`([A-Z_]+)`", names)
        shown = re.findall(r"`([^`]*)`", default)
        for at, name in enumerate(names):
            rows[name] = shown[at] if len(names) > 1 else default.strip()
    return rows


def gunicorn_settings() -> dict[str, str | None]:
    """What gunicorn.conf.py reads from the environment, with its default when it is a
    literal (None otherwise: WEB_CONCURRENCY's count of CPUs, a name read only for its
    presence)."""
    found: dict[str, str | None] = {}
    for name, default in READ_BY_GUNICORN.findall((ROOT / "gunicorn.conf.py").read_text()):
        found[name] = found.get(name) or default or None
    return found


def as_written(value: object) -> str:
    """A default as the table writes it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_every_setting_the_code_reads_is_in_the_table_and_nothing_else():
    read = set(SETTINGS) | set(gunicorn_settings())
    assert set(documented()) == read


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_the_table_gives_the_default_of_each_setting_of_the_service(name):
    shown = documented()[name]
    if name == "MAX_WAITERS":  # derived from another setting when unset
        assert shown == "¾ of `GUNICORN_WORKER_CONNECTIONS`"
        return
    expected = as_written(SETTINGS[name][0])
    if expected == "unset":
        assert shown.startswith("unset"), shown
    else:
        assert shown.split(" ", 1)[0] == f"`{expected}`", shown


@pytest.mark.parametrize("name", sorted(gunicorn_settings()))
def test_the_table_gives_the_default_of_each_setting_of_gunicorn(name):
    default = gunicorn_settings()[name]
    shown = documented()[name]
    if name in SETTINGS:  # read by both: the service's default, checked above, is gunicorn's
        assert default is None or as_written(SETTINGS[name][0]) == default
    elif default is not None:
        assert shown.strip("`").split("`", 1)[0] == default, shown


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Gunicorn:
    settings = {
        "WEB_CONCURRENCY": "3",  # without Redis: one worker whatever this says
        "MAX_BODY_BYTES": "1000",
        "LONG_POLL_SECONDS": "1",
        "SESSION_TTL_SECONDS": "4",
        "STREAM_PING_SECONDS": "1",
        "MAX_WAITERS_PER_TOKEN": "1",
        "METRICS_TOKEN": "metrics-secret",
        "CORS_ORIGINS": "https://play.example",
        "LOG_LEVEL": "warning",
    }
    with gunicorn(tmp_path_factory.mktemp("settings") / "gunicorn.log", **settings) as up:
        yield up


def two_humans(base: str) -> tuple[str, str]:
    """A session of two human seats (nobody moves by itself): its id and seat 1's token."""
    created = requests.post(
        f"{base}/v1/sessions", json={"seats": [{"type": "human"}, {"type": "human"}]}, timeout=10
    )
    assert created.status_code == 201, created.text
    return created.json()["id"], created.json()["seats"][1]["token"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_without_redis_there_is_one_worker_whatever_web_concurrency_says(served):
    assert len(served.workers()) == 1


def test_with_redis_there_are_web_concurrency_workers(redis_url, tmp_path):
    with gunicorn(tmp_path / "gunicorn.log", REDIS_URL=redis_url, WEB_CONCURRENCY="2") as up:
        assert len(up.workers()) == 2


def test_a_body_over_max_body_bytes_is_a_413(served):
    answer = requests.post(
        f"{served.url}/v1/games/basra/new", json={"seed": "x" * 1200}, timeout=10
    )
    assert answer.status_code == 413
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["type"] == "/problems/body-too-large"


def test_the_long_poll_waits_long_poll_seconds_then_answers_nothing(served):
    session, token = two_humans(served.url)
    started = time.monotonic()
    answer = requests.get(
        f"{served.url}/v1/sessions/{session}/events?after=0", headers=bearer(token), timeout=10
    )
    waited = time.monotonic() - started
    assert answer.status_code == 200 and answer.json() == []
    assert 0.9 <= waited < 10, waited  # 1 s, not the default 25 s


def test_a_reader_over_max_waiters_per_token_is_a_429_with_retry_after(served):
    session, token = two_humans(served.url)
    with requests.get(
        f"{served.url}/v1/sessions/{session}/stream", headers=bearer(token), stream=True,
        timeout=10,
    ) as first:  # fmt: skip
        assert first.status_code == 200
        next(first.iter_lines())  # open: its first line is a ping
        second = requests.get(
            f"{served.url}/v1/sessions/{session}/events", headers=bearer(token), timeout=10
        )
    assert second.status_code == 429
    assert second.json()["type"] == "/problems/too-many-readers"
    assert int(second.headers["Retry-After"]) >= 1


def test_metrics_answer_only_with_metrics_token(served):
    assert requests.get(f"{served.url}/metrics", timeout=10).status_code == 401
    answer = requests.get(f"{served.url}/metrics", headers=bearer("metrics-secret"), timeout=10)
    assert answer.status_code == 200


def test_a_session_lives_session_ttl_seconds_from_its_last_use_and_a_stream_ends_then(served):
    """Every read keeps a session alive; an open stream alone does not, and it says `end`
    when the session expires."""
    session, token = two_humans(served.url)
    read = f"{served.url}/v1/sessions/{session}"
    time.sleep(2)
    assert requests.get(read, headers=bearer(token), timeout=10).status_code == 200
    time.sleep(2)  # 4 s after creation, 2 s after the read: alive
    assert requests.get(read, headers=bearer(token), timeout=10).status_code == 200
    started = time.monotonic()
    with requests.get(f"{read}/stream", headers=bearer(token), stream=True, timeout=10) as stream:
        lines = [line for line in stream.iter_lines(decode_unicode=True) if line]
    assert lines[-2:] == ["event: end", "data: {}"]
    assert 3 <= time.monotonic() - started < 10  # 4 s from the read, a ping at most more
    assert requests.get(read, headers=bearer(token), timeout=10).status_code == 404


def test_cors_origins_lets_the_listed_origin_send_and_read_the_documented_headers(served):
    preflight = requests.options(
        f"{served.url}/v1/sessions",
        headers={
            "Origin": "https://play.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key, "
            "if-none-match, last-event-id, x-request-id",
        },
        timeout=10,
    )
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://play.example"
    assert preflight.headers["Access-Control-Allow-Methods"] == "DELETE, GET, POST"
    assert preflight.headers["Access-Control-Max-Age"] == "600"
    allowed = preflight.headers["Access-Control-Allow-Headers"].split(", ")
    assert set(allowed) == {
        "authorization", "content-type", "idempotency-key", "if-none-match", "last-event-id",
        "x-request-id",
    }  # fmt: skip
    answer = requests.get(
        f"{served.url}/v1/games", headers={"Origin": "https://play.example"}, timeout=10
    )
    exposed = answer.headers["Access-Control-Expose-Headers"].split(", ")
    assert exposed == ["ETag", "Location", "Retry-After", "WWW-Authenticate", "X-Request-ID"]
    assert "Access-Control-Allow-Credentials" not in answer.headers


def test_rate_limit_address_refuses_with_a_429_and_never_limits_health(tmp_path):
    # The suite turns the limits off (tests/conftest.py): on again, as by default.
    settings = {"RATE_LIMITS": "true", "RATE_LIMIT_ADDRESS": "3/minute"}
    with gunicorn(tmp_path / "gunicorn.log", **settings) as up:
        statuses = [requests.get(f"{up.url}/v1/games", timeout=10) for _ in range(4)]
        assert [answer.status_code for answer in statuses] == [200, 200, 200, 429]
        refused = statuses[-1]
        assert refused.json()["type"] == "/problems/rate-limited"
        assert int(refused.headers["Retry-After"]) >= 1
        for path in ("/livez", "/readyz", "/metrics"):
            assert requests.get(f"{up.url}{path}", timeout=10).status_code == 200


def test_the_metrics_table_names_every_metric_the_service_exports(served):
    """Every metric family /metrics answers (a move's and a stream's included) is a row of
    the page's table of metrics, and every row one the service defines."""
    session, token = two_humans(served.url)
    with requests.get(
        f"{served.url}/v1/sessions/{session}/stream", headers=bearer(token), stream=True,
        timeout=10,
    ) as stream:  # fmt: skip
        next(stream.iter_lines())
        scraped = requests.get(
            f"{served.url}/metrics", headers=bearer("metrics-secret"), timeout=10
        ).text
    exported = set(re.findall(r"^# TYPE (cards_\w+) ", scraped, re.MULTILINE))
    text = (ROOT / "docs" / "operations.md").read_text()
    rows = set(re.findall(r"^\| `(cards_\w+)`", text, re.MULTILINE))
    defined = set(re.findall(r'"(cards_\w+)"', (ROOT / "service" / "metrics.py").read_text()))
    assert exported <= rows == defined


def test_the_redis_key_table_names_every_key_the_store_writes():
    """The store's own layout (its module's docstring) and the page's table name the same
    keys, placeholders aside."""

    def keys(text: str, pattern: str) -> set[str]:
        return {re.sub(r"<[^>]*>", "<>", key) for key in re.findall(pattern, text, re.MULTILINE)}

    layout = keys(redis_store.__doc__ or "", r"^    (cards:\S+)")
    table = keys((ROOT / "docs" / "operations.md").read_text(), r"^\| `(cards:[^`]+)` \|")
    assert layout <= table and len(layout) >= 10
