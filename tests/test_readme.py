"""The README as a newcomer pastes it: every `sh` block, in order, in one shell, against a
live server started as `make run` starts it (in-process sessions)."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.gunicorn_server import gunicorn

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SERVED_AT = "http://localhost:8000"
BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
MARK = "@@block"


def blocks() -> list[str]:
    return BLOCK.findall(README.read_text())


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


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list[str]:
    """What each block printed, run in a fresh directory as on a fresh clone."""
    directory = tmp_path_factory.mktemp("readme")
    with gunicorn(directory / "gunicorn.log", LONG_POLL_SECONDS="2") as server:
        script = ["set -euo pipefail"]
        for number, block in enumerate(blocks()):
            script += [f"echo; echo {MARK} {number}", block.replace(SERVED_AT, server.url)]
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=directory, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return [part.split("\n", 1)[1] for part in done.stdout.split(f"{MARK} ")[1:]]


def test_the_readme_has_the_stateless_and_the_hosted_walk_throughs():
    found = blocks()
    assert any("/v1/games/basra" in block for block in found)
    assert any("/v1/sessions" in block for block in found)


def test_every_answer_is_json_and_only_the_promised_ones_are_errors(outputs):
    problems = []
    for output in outputs:
        values = json_values(output)
        assert values, output
        problems += [v for v in values if isinstance(v, dict) and "status" in v and "title" in v]
    # One illegal move per game: Basra's card not in hand, Bank's lay that does not beat.
    assert [problem["status"] for problem in problems] == [422, 422]
    assert problems[0]["errors"] == {"move.card": ["card not in hand: 8D"]}
    assert list(problems[1]["errors"]) == ["move.card"]
    assert "does not beat the target" in problems[1]["errors"]["move.card"][0]


def test_the_hosted_walk_through_plays_and_its_events_step_returns_events(outputs):
    hosted = next(output for output in outputs if '"seats"' in output and '"token"' in output)
    created, read, moved, events = json_values(hosted)
    assert created["seats"][0]["token"]
    assert read["id"] == created["id"]
    assert moved["version"] > read["version"]
    assert events == moved["events"]
    assert hosted.rstrip().endswith("204")
