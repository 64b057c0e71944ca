"""What a person meets first: the bare address, the play page and its assets, and where a
new hosted session lives."""

import re

PLAY_ASSETS = {"/play/play.js": "javascript", "/play/play.css": "text/css"}


def test_the_bare_address_sends_people_to_the_api_page(client):
    answer = client.get("/")
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/docs/"
    assert client.get("/docs/").status_code == 200


def test_the_play_page_and_its_assets_come_from_the_service(client):
    page = client.get("/play")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    linked = set(re.findall(r'(?:src|href)="([^"]+)"', html))
    assert linked == {"data:,", "/docs/", *PLAY_ASSETS}
    for path, kind in PLAY_ASSETS.items():
        asset = client.get(path)
        assert asset.status_code == 200
        assert kind in asset.mimetype
        # Nothing is fetched from elsewhere: the page works offline.
        assert "http://" not in asset.get_data(as_text=True)
        assert "https://" not in asset.get_data(as_text=True)


def test_an_unknown_play_asset_is_a_404(client):
    assert client.get("/play/nothing.js").status_code == 404
    assert client.get("/play/../__init__.py").status_code == 404


def test_a_new_session_says_where_it_lives(client):
    created = client.post(
        "/v1/sessions",
        json={"game": "basra", "seats": [{"type": "human"}, {"type": "bot", "level": "random"}]},
    )
    assert created.status_code == 201
    assert created.headers["Location"] == f"/v1/sessions/{created.get_json()['id']}"
    token = created.get_json()["seats"][0]["token"]
    read = client.get(created.headers["Location"], headers={"Authorization": f"Bearer {token}"})
    assert read.status_code == 200
