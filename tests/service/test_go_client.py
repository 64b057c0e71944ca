"""The client OpenAPI Generator's `go` generator makes from openapi.yaml compiles, and reads
the events of GET /v1/sessions/{id}/events of a whole match of every game, each back to the
JSON the server sent. (The events were an anyOf of each game's discriminated union: the
client named fields it never declared and did not compile.)

Go and the one package the client imports (gopkg.in/validator.v2, vendored from its Debian
package: no module proxy) come from Debian: `make test` installs them (`make go`)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.game import games, get_game
from tests.service.generated_clients import OPENAPI_GENERATOR, run

pytestmark = pytest.mark.generators

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
VALIDATOR = Path("/usr/share/gocode/src/gopkg.in/validator.v2")  # golang-gopkg-validator.v2-dev
APP_CONFIG = {"RATE_LIMITS": False}  # whole matches, move after move

READ_BACK = """package openapi

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// Every game's events, as the server sent them, read into the generated model and
// written back.
func TestEventsReadBack(t *testing.T) {
	raw, err := os.ReadFile(os.Getenv("EVENTS"))
	if err != nil {
		t.Fatal(err)
	}
	var byGame map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byGame); err != nil {
		t.Fatal(err)
	}
	for game, sent := range byGame {
		var events []SessionEventsInner
		if err := json.Unmarshal(sent, &events); err != nil {
			t.Fatalf("%s: %v", game, err)
		}
		var items []json.RawMessage
		json.Unmarshal(sent, &items)
		for index, event := range events {
			back, err := json.Marshal(event)
			if err != nil {
				t.Fatalf("%s event %d: %v", game, index, err)
			}
			var want, got interface{}
			json.Unmarshal(items[index], &want)
			json.Unmarshal(back, &got)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s event %d: sent %s, read back %s", game, index, items[index], back)
			}
		}
	}
}
"""


def go(*arguments: str, cwd: Path, log: Path, **env: str) -> None:
    """The go command, offline: the client's one dependency is vendored."""
    settings = {
        **os.environ, "GOFLAGS": "-mod=vendor", "GOPROXY": "off", "GOTOOLCHAIN": "local",
        "GOCACHE": str(cwd / ".cache"), "GO111MODULE": "on", **env,
    }  # fmt: skip
    with log.open("w") as out:
        done = subprocess.run(["go", *arguments], cwd=cwd, env=settings, stdout=out,
                              stderr=subprocess.STDOUT, check=False)  # fmt: skip
    assert done.returncode == 0, log.read_text()[-4000:]


@pytest.fixture(scope="module")
def go_client(tmp_path_factory) -> Path:
    into = tmp_path_factory.mktemp("go-client")
    client = into / "client"
    run(
        [str(OPENAPI_GENERATOR), "generate", "-i", str(SPEC), "-g", "go", "-o", str(client),
         "--global-property", "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false"],
        into / "generate.log",
    )  # fmt: skip
    shutil.copytree(VALIDATOR, client / "vendor/gopkg.in/validator.v2")
    (client / "vendor/modules.txt").write_text(
        "# gopkg.in/validator.v2 v2.0.1\n## explicit\ngopkg.in/validator.v2\n"
    )
    (client / "read_back_test.go").write_text(READ_BACK)
    return client


def test_the_go_client_compiles(go_client):
    go("build", "./...", cwd=go_client, log=go_client.parent / "build.log")


def match_events(client, game: str) -> list:
    """The events of a whole match of `game` (a human seat playing its first legal move,
    greedy bots in the others), as GET /v1/sessions/{id}/events answers."""
    seats = [{"type": "human"}]
    seats += [{"type": "bot", "level": "greedy"}] * (min(get_game(game).catalogue()["seats"]) - 1)
    created = client.post("/v1/sessions", json={"game": game, "seats": seats, "seed": "go"})
    assert created.status_code == 201, created.get_json()
    url = f"/v1/sessions/{created.get_json()['id']}"
    token = {"Authorization": f"Bearer {created.get_json()['seats'][0]['token']}"}
    for _ in range(2000):
        session = client.get(url, headers=token).get_json()
        if session["view"]["status"] != "playing":
            break
        body = {"move": session["moves"][0], "version": session["version"]}
        assert client.post(f"{url}/moves", json=body, headers=token).status_code == 200
    events = client.get(f"{url}/events", headers=token)
    assert events.status_code == 200
    return events.get_json()


def test_the_go_client_reads_every_game_s_events_back(go_client, client):
    sent = {game: match_events(client, game) for game in sorted(games())}
    assert all(sent.values())
    path = go_client.parent / "events.json"
    path.write_text(json.dumps(sent))
    go("test", "-run", "TestEventsReadBack", ".", cwd=go_client,
       log=go_client.parent / "test.log", EVENTS=str(path))  # fmt: skip
