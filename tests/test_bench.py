"""The benchmark's own parts that its figures rest on: the echo floor, the worker shape it
is served in, the exact percentiles of wrk's latencies, wrk's gate, the order it plays a
connection's moves in, where a slice of hosted sessions leaves off, how many stateless
positions its connections share, the Bank expert's row, and the work whose instructions are
counted."""

import http.server
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import orjson

from bench import wrk
from bench.bots import BANK_BUDGET_MS, measure
from bench.echo import app
from bench.http import worker_shape
from bench.instructions import expert, playouts, state_json
from bench.sessions import Moves, spread
from bench.wrk import Load


def test_the_echo_parses_the_body_and_writes_it_back():
    body = {"state": {"hands": [["7D", "TD"]]}, "move": {"card": "10d"}}
    answer = app.test_client().post("/echo", data=orjson.dumps(body))
    assert answer.status_code == 200
    assert answer.mimetype == "application/json"
    assert orjson.loads(answer.data) == body  # nothing checked, nothing rewritten


def test_the_echo_is_served_in_the_services_worker_shape():
    shape = worker_shape([], {})
    assert shape == {
        "worker_class": "gevent",
        "threads": 8,
        "worker_connections": 1000,
        "workers": 1,
        "keepalive": 5,
    }
    assert worker_shape(["-k", "gthread", "--threads", "128"], {})["threads"] == 128
    assert worker_shape([], {"GUNICORN_WORKER_CONNECTIONS": "50"})["worker_connections"] == 50


def test_percentiles_count_every_latency_of_every_slice():
    load = Load("x", requests=100, seconds=2.0)
    load.latencies = Counter({1000: 90, 5000: 9, 80000: 1})
    assert load.rate == 50
    assert load.percentile(0.5) == 1.0
    assert load.percentile(0.9) == 1.0
    assert load.percentile(0.99) == 5.0
    assert load.percentile(1.0) == 80.0


def test_the_bank_expert_row_is_its_median_real_choice_against_the_budget():
    (row,) = measure(80)
    assert row.name == "bank expert decision, median of real choices"
    assert (row.unit, row.peer, row.goal, row.higher) == ("ms", BANK_BUDGET_MS, 1.0, False)
    assert row.figure > 0
    assert row.verdict in ("pass", "FAIL")


def test_a_slice_of_hosted_sessions_is_followed_by_a_session_it_never_began(tmp_path):
    moves = Moves(tmp_path / "0.tsv", iter(()))
    moves.starts, moves.lines = [0, 200, 450], 600  # three sessions of 200, 250, 150 moves
    assert moves.resume(130) == 130  # cut off in the first: its move in flight may be lost
    assert moves.next == 200
    # Stopped at a session's first move: wrk may have sent it without reading its answer.
    assert moves.resume(200) == 0
    assert moves.next == 450
    assert moves.resume(600) == 150
    assert moves.next == 600  # every move played: the next slice needs new sessions


class Recorded(http.server.BaseHTTPRequestHandler):
    """Answers every POST 200 on a keep-alive connection, noting for each request whether
    the gate was open when it arrived, its Authorization and its body."""

    protocol_version = "HTTP/1.1"
    gate: Path | None = None
    seen: list[tuple[bool, str | None, bytes]]

    def do_POST(self) -> None:
        opened = self.gate is not None and self.gate.exists()
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((opened, self.headers["Authorization"], body))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def recording(gate: Path | None = None) -> Iterator[str]:
    """A Recorded server on a free loopback port, its notes cleared: its URL."""
    Recorded.gate, Recorded.seen = gate, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def test_the_stateless_positions_are_a_thousand_in_all_spread_over_every_connection():
    # 64 connections' thousand positions each: every wrk thread read all 64,000 before the
    # gate opened, and gunicorn's keep-alive closed the connections that waited longest.
    each = [[f"{connection}:{n}".encode() for n in range(1000)] for connection in range(64)]
    chosen = spread([body for bodies in each for body in bodies], 1000)
    assert len(chosen) == len(set(chosen)) == 1000
    assert {body.split(b":")[0] for body in chosen} == {str(c).encode() for c in range(64)}
    assert spread([b"a", b"b"], 1000) == [b"a", b"b"]  # fewer than the bound: all of them


def test_wrk_threads_send_nothing_before_the_last_one_opens_the_gate(tmp_path, monkeypatch):
    # A corpus that takes each thread's init a while to read: without the gate, the first
    # threads would be sending while the last ones read it.
    bodies = wrk.body_file(tmp_path / "bodies.jsonl", [b'{"n":%d}' % n for n in range(20000)])
    monkeypatch.setattr(wrk.tempfile, "TemporaryDirectory", lambda: nullcontext(tmp_path))
    with recording(tmp_path / "open") as url:
        load = wrk.post(Load("gated"), url, "/x", bodies, connections=4, seconds=1, threads=4)
    assert load.requests > 0 and load.failures == 0
    assert Recorded.seen and all(opened for opened, _, _ in Recorded.seen)


def test_wrk_plays_each_connections_moves_in_order_from_its_start_and_none_twice(tmp_path):
    starts = [5, 0, 12]
    for connection in range(len(starts)):
        (tmp_path / f"{connection}.tsv").write_text("".join(
            f'/m\tBearer {connection}\t{{"n":{n}}}\n' for n in range(100000)
        ))  # fmt: skip
    load = Load("played")
    with recording() as url:
        turns = wrk.play(load, url, tmp_path, starts, connections=len(starts), seconds=1)
    assert load.failures == 0
    for connection, start in enumerate(starts):
        played = [orjson.loads(body)["n"] for _, token, body in Recorded.seen
                  if token == f"Bearer {connection}"]  # fmt: skip
        # Thread 0's first call, wrk's check of the script, is never sent and skips nothing.
        assert played == list(range(start, start + len(played))) and played
        # The next slice starts after every move asked for, the one in flight included.
        assert turns[connection] - (start + len(played)) in (0, 1)


def test_the_work_whose_instructions_are_counted_is_the_same_every_run():
    # Counting rests on the second run doing exactly the first's work and more.
    assert playouts("bank", 2) == playouts("bank", 2)
    assert playouts("bank", 2)[0] > playouts("bank", 1)[0] > 0
    decisions, digest = expert("bank", 2)
    assert (decisions, digest) == expert("bank", 2)
    assert decisions == 2 and digest != expert("bank", 1)[1]
    assert state_json("basra", 2) == (100, "")  # bench.state's 50 states, twice


def test_the_state_benchmark_times_every_game_from_freshly_parsed_forms(monkeypatch, capsys):
    """Keeping every form read alive keeps their ids apart."""
    import bench.state

    read: list[object] = []
    real = bench.state.games()["basra"].read

    def reading(data):
        read.append(data)
        return real(data)

    monkeypatch.setattr(bench.state.games()["basra"], "read", reading)
    targets = {target.name: target for target in bench.state.measure(2)}
    assert {"bank state read + write", "basra state read + write"} <= set(targets)
    assert all(target.figure > 0 for target in targets.values())
    # Every call of every repeat of every round read each of the two states once, each a
    # form of its own (parsed afresh: no dict is read twice while another holds it).
    timed = read[2:]  # the first two build the states the write is timed on
    assert len(timed) == 2 * bench.state.CALLS * bench.state.REPEATS * bench.state.ROUNDS
    assert len({id(form) for form in timed}) == len(timed)
    assert "orjson" in capsys.readouterr().out
