"""The JSON examples of docs/api.md that are not commands (its `json` blocks) against a live
server: the stateless answers to the state the page deals (seed "docs") value for value, the
session answers (whose ids, tokens and times are new on every run) field for field, and the
error shown for a bad card. A key "..." in a shown object stands for the fields left out, a
"..." string last in a list for the items left out, and a string with an ellipsis for a
value that differs from run to run."""

import json
import re
from pathlib import Path

import pytest
import requests

from service.hosted.commit import EXPERT_MOVES_PER_STEP, SERVER_MOVES_PER_STEP
from service.hosted.tokens import digest
from service.keys import new_key
from tests.gunicorn_server import Gunicorn, gunicorn

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = [
    json.loads(text)
    for text in re.findall(r"^```json\n(.*?)^```$", (ROOT / "docs" / "api.md").read_text(),
                           re.MULTILINE | re.DOTALL)
]  # fmt: skip
KEY = new_key()
LEFT_OUT = ("...", "…")


def example(*first_keys: str, whole: bool = False) -> object:
    """The page's one example whose (first item's) keys start with these (are these, when
    `whole`)."""
    keys = list(first_keys)
    (found,) = [
        shown for shown in EXAMPLES
        if list(shown[0] if isinstance(shown, list) else shown)[: None if whole else len(keys)]
        == keys
    ]  # fmt: skip
    return found


def agrees(shown: object, actual: object, path: str = "", exact: bool = True) -> None:
    """`actual` is what `shown` shows: the same fields and items, the same values where
    `exact` (else the same kinds of values), left-out parts aside."""
    if isinstance(shown, dict):
        assert isinstance(actual, dict), path
        fields = shown.keys() - {"..."}
        if "..." in shown:
            assert fields <= actual.keys(), (path, fields - actual.keys())
        else:
            assert fields == actual.keys(), (path, fields ^ actual.keys())
        for field in fields:
            agrees(shown[field], actual[field], f"{path}.{field}", exact)
    elif isinstance(shown, list):
        assert isinstance(actual, list), path
        cut = bool(shown) and isinstance(shown[-1], str) and shown[-1].startswith(LEFT_OUT)
        items = shown[:-1] if cut else shown
        if cut:
            assert len(actual) >= len(items), path
        elif exact:
            assert len(actual) == len(items), path
        for item, value in zip(items, actual):  # without `exact`, as many as were played
            agrees(item, value, path, exact)
    elif isinstance(shown, str) and any(mark in shown for mark in LEFT_OUT):
        assert isinstance(actual, str), path
    elif exact:
        assert actual == shown, path
    else:
        assert type(actual) is type(shown), path


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Gunicorn:
    log = tmp_path_factory.mktemp("examples") / "gunicorn.log"
    with gunicorn(log, API_KEYS=f"acme:{digest(KEY)}", LOG_LEVEL="warning") as up:
        yield up


def post(served: Gunicorn, path: str, body: object, **headers: str) -> requests.Response:
    return requests.post(f"{served.url}{path}", json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def dealt(served) -> dict:
    """The page's state: the answer to its `new` request."""
    answer = post(served, "/v1/games/basra/new",
                  {"rules": {"preset": "levantine"}, "seats": 2, "seed": "docs"})  # fmt: skip
    assert answer.status_code == 200
    return answer.json()


def test_the_new_state_shown_is_dealt(dealt):
    agrees(example("state", whole=True), dealt)


def test_its_legal_moves_apply_view_and_hint_are_those_shown(served, dealt):
    state = dealt["state"]
    agrees(example("moves"), post(served, "/v1/games/basra/legal-moves", dealt).json())
    move = {"card": "8d", "capture": ["8C"]}
    applied = post(served, "/v1/games/basra/apply", {"state": state, "move": move}).json()
    agrees(example("state", "events"), applied)
    agrees(example("view"), post(served, "/v1/games/basra/view", {**dealt, "seat": 0}).json())
    hint = post(served, "/v1/games/basra/hint", {**dealt, "level": "greedy"}).json()
    agrees(example("move", "alternatives"), hint)


def test_the_invalid_state_shown_is_the_answer_to_a_bad_card(served, dealt):
    state = json.loads(json.dumps(dealt["state"]))
    state["hands"][0][2] = "ZZ"
    answer = post(served, "/v1/games/basra/legal-moves", {"state": state})
    assert answer.status_code == 422
    assert answer.headers["Content-Type"] == "application/problem+json"
    agrees(example("type", "title"), answer.json())


def test_the_rules_message_the_page_quotes_is_the_one_served(served):
    answer = post(served, "/v1/games/basra/new", {"rules": {"preset": "levantine", "hand_size": 5}})
    assert answer.status_code == 422
    (message,) = answer.json()["errors"]["rules.hand_size"]
    assert f"`rules.hand_size` (`{message}`)" in (ROOT / "docs" / "api.md").read_text()


def test_the_creation_shown_is_answered_as_shown(served):
    body = example("game", "rules", "seats")
    answer = post(served, "/v1/sessions", body, Authorization=f"Bearer {KEY}")
    assert answer.status_code == 201
    assert answer.headers["Location"] == f"/v1/sessions/{answer.json()['id']}"
    agrees(example("id", "game", "version"), answer.json(), exact=False)


def test_the_listing_and_the_record_shown_have_the_fields_served(served):
    """A match against a greedy bot played to its end (target 1: one round), listed and
    its record read as the owner."""
    owner = {"Authorization": f"Bearer {KEY}"}
    rules = {"preset": "levantine", "target_score": 1}
    seats = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    for _ in range(2):  # two, so that a page of one has a `next`
        created = post(served, "/v1/sessions", {"rules": rules, "seats": seats}, **owner).json()
    session = f"{served.url}/v1/sessions/{created['id']}"
    listed = requests.get(f"{served.url}/v1/sessions?limit=1", headers=owner, timeout=10)
    agrees(example("sessions", "next"), listed.json(), exact=False)
    seat = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    read = requests.get(session, headers=seat, timeout=10).json()
    while read.get("moves"):
        chosen = {key: read["moves"][0][key] for key in ("card", "capture")}
        read = requests.post(f"{session}/moves", json={"move": chosen, "version": read["version"]},
                             headers=seat, timeout=30).json()  # fmt: skip
    record = requests.get(f"{session}/record", headers=owner, timeout=10).json()
    assert record["status"] == "match_over"
    agrees(example("format", "game"), record, exact=False)


def test_the_bound_on_the_servers_own_play_is_the_one_it_keeps():
    """Both pages give service.hosted.commit's bound on a step of bot and timeout moves."""
    api = (ROOT / "docs" / "api.md").read_text()
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert f"at most **{SERVER_MOVES_PER_STEP}** such moves (at most {EXPERT_MOVES_PER_STEP}" in api
    assert (
        f"at most {SERVER_MOVES_PER_STEP} moves per request or\ntimer firing, of which at most "
        f"{EXPERT_MOVES_PER_STEP} `expert` searches" in operations
    )
