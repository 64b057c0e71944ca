"""The docs as a reader pastes them: for the README and every page of docs/, every `sh` block,
in order, in one shell per page, against a live server started as `make run` starts it
(in-process sessions). `shell` blocks (make, docker, benchmarks) are shown, not run."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from service.hosted.tokens import digest
from service.keys import new_key
from tests.gunicorn_server import Gunicorn, gunicorn

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SERVED_AT = "http://localhost:8000"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
MARK = "@@block"


def fenced(page: Path) -> list[tuple[str, str]]:
    """(language, text) of every fenced block of `page`, in order."""
    return FENCE.findall(page.read_text())


def blocks(page: Path) -> list[str]:
    return [text for language, text in fenced(page) if language == "sh"]


RUN = [page for page in PAGES if blocks(page)]


def json_values(text: str) -> list[object]:
    """Every JSON value printed (answers follow each other with or without a newline);
    the lines that are not JSON (a status code) are left out."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at] in "[{":
            value, at = decoder.raw_decode(text, at)
            values.append(value)
        else:
            at += 1
    return values


def problems(output: str) -> list[dict]:
    return [v for v in json_values(output) if isinstance(v, dict) and {"status", "title"} <= set(v)]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Gunicorn:
    with gunicorn(tmp_path_factory.mktemp("docs") / "gunicorn.log", LONG_POLL_SECONDS="2") as up:
        yield up


# The guide for backends runs against a service with API_KEYS, as its reader's does: its
# blocks get the integrator's key as $KEY, as the guide says.
BACKENDS = "integrators.md"
KEY = new_key()


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory) -> Gunicorn:
    log = tmp_path_factory.mktemp("docs") / "keyed.log"
    settings = {"API_KEYS": f"acme:{digest(KEY)}", "WEBHOOK_HOSTS": "127.0.0.1"}
    with gunicorn(log, LONG_POLL_SECONDS="2", **settings) as up:
        yield up


@pytest.fixture(scope="module")
def ran(server, keyed_server, tmp_path_factory) -> dict[str, list[str]]:
    """What each block of each page printed (page name -> outputs), each page's blocks run
    in one shell, in a fresh directory as on a fresh clone."""
    outputs: dict[str, list[str]] = {}
    for page in RUN:
        directory = tmp_path_factory.mktemp(page.stem)
        serving = keyed_server if page.name == BACKENDS else server
        script = ["set -euo pipefail"]
        for number, block in enumerate(blocks(page)):
            script += [f"echo; echo {MARK} {number}", block.replace(SERVED_AT, serving.url)]
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=directory, capture_output=True, text=True,
            timeout=600, env={**os.environ, "KEY": KEY},
        )  # fmt: skip
        assert done.returncode == 0, f"{page.name}: {done.stderr}"
        assert done.stderr == "", page.name
        outputs[page.name] = [part.split("\n", 1)[1] for part in done.stdout.split(f"{MARK} ")[1:]]
    return outputs


def test_the_pages_with_commands_are_the_readme_and_the_api():
    assert {page.name for page in RUN} == {"README.md", "api.md", BACKENDS}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_request_to_the_service_shown_is_in_a_block_that_runs(page):
    """A block with a curl command is an `sh` block, so the test runs it."""
    for language, text in fenced(page):
        if re.search(r"\bcurl\b", text):
            assert language == "sh", f"{page.name}: {text[:80]}"


LINK = re.compile(r"\]\(([^)#]+)[^)]*\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_page_keeps_its_reader_in_the_repository(page):
    """A user has only the repository: every relative link leads to a file in it, and no
    page sends the reader to a contract or spec that is not in it."""
    text = page.read_text()
    for target in LINK.findall(text):
        if not target.startswith(("http://", "https://")):
            linked = (page.parent / target).resolve()
            assert linked.is_relative_to(ROOT) and linked.exists(), f"{page.name}: {target}"
    assert not re.search(r"\bcontract\b|\bspec\b|shared/", text, re.IGNORECASE), page.name


def test_every_block_prints_json(ran):
    for page, outputs in ran.items():
        for output in outputs:
            assert json_values(output), f"{page}: {output!r}"


def test_the_readme_deals_and_lists_moves(ran):
    (output,) = ran["README.md"]
    (moves,) = json_values(output)
    assert moves["moves"] and not problems(output)


def test_the_api_walk_throughs_refuse_only_the_moves_they_say_they_refuse(ran):
    found = [problem for output in ran["api.md"] for problem in problems(output)]
    # One illegal move per game: Basra's card not in hand, Bank's lay that does not beat.
    assert [problem["status"] for problem in found] == [422, 422]
    assert found[0]["errors"] == {"move.card": ["card not in hand: 8D"]}
    assert list(found[1]["errors"]) == ["move.card"]
    assert "does not beat the target" in found[1]["errors"]["move.card"][0]


def test_the_problems_the_comments_show_are_the_ones_printed(ran):
    """A problem a block's comment shows (its `type` and `title`) is one the page printed."""
    for page in RUN:
        comments = "\n".join(blocks(page))
        shown = set(re.findall(r'^#.*"type": "([^"]+)", "title": "([^"]+)"', comments, re.M))
        printed = {(problem["type"], problem["title"])
                   for output in ran[page.name] for problem in problems(output)}  # fmt: skip
        assert shown <= printed, page.name


def hosted_walk_through(ran: dict[str, list[str]]) -> str:
    return next(output for output in ran["api.md"] if '"spectators"' in output)


def test_the_hosted_walk_through_plays_and_its_events_step_returns_events(ran):
    created, read, moved, events = json_values(hosted_walk_through(ran))[:4]
    assert created["seats"][0]["token"] and created["spectators"][0]["token"]
    assert read["id"] == created["id"]
    assert read["deal"] == created["deal"] and "seed" not in read["deal"]
    assert moved["version"] > read["version"]
    assert events == moved["events"]


def stream_lines(text: str) -> list[str]:
    """An event stream's messages (each ended by a blank line), its pings left out: how many
    come depends on how long the stream was open."""
    return [message for message in text.strip().split("\n\n") if message != ": ping"]


def test_the_stream_shown_is_what_the_server_sent(ran):
    """The walk-through's second move is answered 200, its end 204, and the stream the
    spectator read is the one shown below it, message for message."""
    output = hosted_walk_through(ran)
    after_the_events = output.split("200\n204\n", 1)
    assert len(after_the_events) == 2, output
    (shown,) = [text for language, text in fenced(ROOT / "docs" / "api.md")
                if language == "text" and text.startswith(": ping")]  # fmt: skip
    assert stream_lines(after_the_events[1]) == stream_lines(shown)
    assert stream_lines(shown)[-1] == "event: end\ndata: {}"


def test_the_fair_deal_is_revealed_and_checks_out(ran):
    fair = next(output for output in ran["api.md"] if "same_first_hand" in output)
    deal, hashed, dealt = json_values(fair)[-3:]
    assert set(deal) == {"commitment", "seed"}
    assert hashed == {"seed_hashes_to_commitment": True}
    assert dealt == {"same_first_hand": True}


def test_the_guides_receiver_verifies_what_the_service_signs(tmp_path):
    """The guide's receiver, run as written, takes a message signed as the service signs
    it and refuses a tampered one."""
    import base64
    import secrets
    import sys
    import time
    import urllib.error
    import urllib.request

    from service.hosted.webhooks import signature
    from tests.redis_server import free_port

    (code,) = [text for language, text in fenced(ROOT / "docs" / BACKENDS) if language == "python"]
    script = tmp_path / "receiver.py"
    script.write_text(code)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    port = free_port()
    env = {**os.environ, "WEBHOOK_SECRET": secret, "PORT": str(port)}
    server = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE)
    try:
        body = b'{"type": "session.turn", "timestamp": "2026-12-01T00:00:00.000Z", "data": {}}'

        def send(signed: bytes) -> int:
            stamp = int(time.time())
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/hooks", data=body, method="POST",
                headers={"webhook-id": "msg_1", "webhook-timestamp": str(stamp),
                         "webhook-signature": signature(secret, "msg_1", stamp, signed),
                         "Content-Type": "application/json"},
            )  # fmt: skip
            for _ in range(100):  # until it listens: bounded by count
                try:
                    return urllib.request.urlopen(request, timeout=5).status
                except urllib.error.HTTPError as error:
                    return error.code
                except urllib.error.URLError:
                    time.sleep(0.05)
            raise AssertionError("the receiver never listened")

        assert send(body) == 204
        assert send(body + b" ") == 401
        assert b"session.turn" in server.stdout.readline()
    finally:
        server.terminate()
        server.wait(timeout=10)
