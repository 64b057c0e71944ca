"""An independent reference of Bank's rules, written from bank-rules.md alone (§3 beating,
§6 legal moves, §16 a move step by step, §11-§14 the end of a deal and of the match) on the
contract's JSON form, for differential tests against the engine. It shares no code with
engine/bank: cards, orders and tables are spelled out again, here and in the suite's
bank_builders (the order of §0, the points of §1.2, the bonuses of §12.1)."""

import copy
from collections.abc import Sequence
from typing import Any

from tests.engine.bank_builders import BONUS, CARD_POINTS, GAME_ORDER, SUITS

State = dict[str, Any]
Move = tuple  # ("lay", card), ("quad", cards), ("run", cards), ("draw",), ("pass",)
Events = list[dict[str, Any]]

CANONICAL = {
    rank + suit: index
    for index, (suit, rank) in enumerate((suit, rank) for suit in SUITS for rank in "A6789TJQK")
}
EXTRA_DEALS = 5
DEAL_CAP = 200


def canonical(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=CANONICAL.__getitem__)


def points(cards: Sequence[str]) -> int:
    return sum(CARD_POINTS.get(card[0], 0) for card in cards)


def height(card: str) -> int:
    return GAME_ORDER.index(card[0])


def beats(card: str, target: str | None, common: dict[str, int], own: str | None) -> bool:
    """§3."""
    if card[0] == "8":
        return False
    if target is None or card[0] == target[0]:
        return True
    if card[1] == target[1]:
        return height(card) < height(target)
    return common[card[1]] > common[target[1]] or card[1] == own


def legal(data: State) -> set[Move]:
    """§6.1, every move of the seat to move."""
    if data["status"] != "playing":
        return set()
    seat = data["turn"]
    hand = data["hands"][seat]
    target = data["target"]["card"] if data["target"] else None
    own = data["trumps"]["personal"][seat]
    moves: set[Move] = set()
    can_beat = False
    for card in hand:
        if card[0] == "8":
            moves.add(("lay", card))
        elif beats(card, target, data["trumps"]["common"], own):
            moves.add(("lay", card))
            can_beat = True
    for rank in GAME_ORDER:
        four = [rank + suit for suit in SUITS]
        if all(card in hand for card in four):
            for top in four:
                moves.add(("quad", (*[card for card in four if card != top], top)))
    for suit in SUITS:
        for low in range(len(GAME_ORDER) - 3):
            run = tuple(rank + suit for rank in GAME_ORDER[low : low + 4])
            if all(card in hand for card in run):
                moves.update({("run", run), ("run", run[::-1])})
    if not can_beat:
        moves.add(("draw",) if data["stock"] and not data["drawn"] else ("pass",))
    return moves


def from_left(dealer: int, seats: int) -> list[int]:
    return [(dealer + step) % seats for step in range(1, seats + 1)]


def next_holder(hands: list[list[str]], seat: int) -> int:
    for other in from_left(seat, len(hands)):
        if hands[other]:
            return other
    raise AssertionError("nobody holds cards")


def first_player(hands: Sequence[Sequence[str]], pack: str, dealer: int) -> int:
    """§4.3."""
    order = from_left(dealer, len(hands))
    for lower in (True, False):
        for seat in order:
            for card in hands[seat]:
                if card[1] == pack[1] and (height(card) < height(pack)) == lower:
                    return seat
    return order[0]


def is_trump_king(card: str, data: State, seat: int) -> bool:
    """§2.4."""
    trumps = data["trumps"]
    return card[0] == "K" and (
        trumps["common"][card[1]] >= 1 or trumps["personal"][seat] == card[1]
    )


def take_bank(data: State, taker: int, why: str, events: Events) -> None:
    """§8: the capture and the target after it (§8.3; the turn-up comes at step 5)."""
    cards = [entry["card"] for entry in data["bank"]]
    data["captured"][taker] = canonical([*data["captured"][taker], *cards])
    events.append(
        {"type": "capture", "seat": taker, "cards": cards, "points": points(cards), "why": why}
    )
    data["bank"] = []
    if data["rules"]["after_capture"] == "free_lead":
        data["target"], data["idle"] = None, 0
    else:
        data["target"] = {"card": cards[-1], "by": None, "virtual": True}


def breakdown(data: State, loser: int | None) -> list[dict[str, Any]]:
    """§12 per seat; only `loser` pays a penalty."""
    rules = data["rules"]
    out = {entry["seat"]: entry for entry in data["out"]}
    sides = []
    for seat in range(data["seats"]):
        entry = out.get(seat)
        penalty = 0
        if seat == loser and rules["hand_penalty"]:
            hand = data["hands"][seat]
            penalty = {
                "hand_points": points(hand),
                "fixed": rules["fixed_penalty"],
                "per_card": rules["per_card_penalty"] * len(hand),
            }[rules["penalty_mode"]]
        captured = points(data["captured"][seat])
        bonus = entry["bonus"] if entry else 0
        sides.append({
            "captured_points": captured,
            "finish": entry["finish"] if entry else None,
            "place": entry["place"] if entry else None,
            "bonus": bonus,
            "penalty": penalty,
            "total": captured + bonus - penalty,
        })  # fmt: skip
    return sides


def loser_of(data: State) -> int:
    """§11.2."""
    holders = [seat for seat in range(data["seats"]) if data["hands"][seat]]
    if len(holders) == 1:
        return holders[0]
    order = [seat for seat in from_left(data["dealer"], data["seats"]) if data["hands"][seat]]
    most = max(points(data["hands"][seat]) for seat in order)
    return next(seat for seat in order if points(data["hands"][seat]) == most)


def match_result(data: State, scores: list[int]) -> tuple[list[int], dict[str, Any] | None]:
    """§14: the winners (none while the match goes on) and the tie-break after the deal."""
    seats = range(data["seats"])
    tiebreak = data["tiebreak"]
    if tiebreak is None:
        best = max(scores)
        if best >= data["rules"]["target_score"]:
            top = [seat for seat in seats if scores[seat] == best]
            if len(top) == 1:
                return top, None
            tiebreak = {"eligible": top, "extra_deals": 0}
    else:
        extra = tiebreak["extra_deals"] + 1
        eligible = tiebreak["eligible"]
        best = max(scores[seat] for seat in eligible)
        top = [seat for seat in eligible if scores[seat] == best]
        if len(top) == 1:
            return top, {"eligible": eligible, "extra_deals": extra}
        tiebreak = {"eligible": top, "extra_deals": extra}
        if extra >= EXTRA_DEALS:
            return top, tiebreak
    if data["deal"] >= DEAL_CAP:
        eligible = tiebreak["eligible"] if tiebreak else list(seats)
        best = max(scores[seat] for seat in eligible)
        return [seat for seat in eligible if scores[seat] == best], tiebreak
    return [], tiebreak


def next_dealer(data: State, loser: int) -> int:
    """§13 (`data` with the deal's scores banked)."""
    rule = data["rules"]["dealer_rule"]
    order = from_left(data["dealer"], data["seats"])
    if rule == "loser":
        return loser
    if rule == "starter":
        return data["starter"]
    if rule == "finisher":
        return data["out"][0]["seat"] if data["out"] else order[0]
    scores = data["scores"]
    wanted = max(scores) if rule == "max_points" else min(scores)
    return next(seat for seat in order if scores[seat] == wanted)


def finish_of(kind: str, top: str, data: State, seat: int) -> str:
    """§10.1."""
    if kind == "quad":
        return "four_kings" if top[0] == "K" else "quad"
    if kind == "run":
        return "run"
    if top[0] == "K":
        return "trump_king" if is_trump_king(top, data, seat) else "king"
    return "plain"


def apply(before: State, move: Move) -> tuple[State, Events]:
    """§16. A move that ends a deal without ending the match ends with a `deal` event that
    holds only `deal` and `dealer`: the shuffle of the next deal is the implementation's."""
    assert move in legal(before), move
    data = copy.deepcopy(before)
    seat = data["turn"]
    rules = data["rules"]
    events: Events = []
    kind = move[0]
    if kind == "draw":  # step 2
        card = data["stock"].pop(0)
        data["hands"][seat] = canonical([*data["hands"][seat], card])
        data["drawn"], data["idle"] = True, 0
        return data, [{"type": "draw", "seat": seat, "card": card, "forced": False}]
    taken = seven = False
    if kind == "pass":  # step 3
        events.append({"type": "pass", "seat": seat})
        data["idle"] += 1
        target = data["target"]
        if (
            target is not None
            and not target["virtual"]
            and target["by"] is not None
            and target["by"] != seat
            and len(data["bank"]) >= 2
        ):
            take_bank(data, target["by"], "pass", events)
            taken = True
    else:  # step 4
        cards = [move[1]] if kind == "lay" else list(move[1])
        for card in cards:
            data["hands"][seat].remove(card)
            data["bank"].append({"card": card, "by": seat})
        top = cards[-1]
        data["target"] = {"card": top, "by": seat, "virtual": False}
        data["idle"] = 0
        if kind == "lay":
            events.append({"type": "lay", "seat": seat, "card": top})
        else:
            events.append({"type": kind, "seat": seat, "cards": cards})
        if not data["hands"][seat]:
            finish = finish_of(kind, top, data, seat)
            place = len(data["out"]) + 1
            entry = {"seat": seat, "place": place, "finish": finish,
                     "bonus": BONUS[finish][place - 1]}  # fmt: skip
            data["out"].append(entry)
            events.append({"type": "out", **entry})
            if finish in ("trump_king", "four_kings"):
                take_bank(data, seat, finish, events)
                taken = True
            seven = bool(data["bank"]) and data["bank"][-1]["card"][0] == "7"
        elif kind == "quad" or (kind == "lay" and top[0] == "8"):
            data["drawn"] = False
            return data, events
        else:
            seven = top[0] == "7"
    # step 5
    holders = [other for other in range(data["seats"]) if data["hands"][other]]
    if len(holders) <= 1 or (not data["stock"] and data["idle"] >= len(holders)):
        loser = loser_of(data)
        sides = breakdown(data, loser)
        scores = [score + side["total"] for score, side in zip(data["scores"], sides)]
        events.append({
            "type": "deal_end", "deal": data["deal"],
            "ending": "E1" if len(holders) <= 1 else "E2", "loser": loser,
            "penalty": sides[loser]["penalty"], "sides": sides, "scores": scores,
            "discarded": [entry["card"] for entry in data["bank"]],
        })  # fmt: skip
        data["scores"] = scores
        winners, data["tiebreak"] = match_result(data, scores)
        if winners:
            winner = winners[0] if len(winners) == 1 else None
            events.append(
                {"type": "match_end", "winner": winner, "winners": winners, "scores": scores}
            )
            data.update(status="match_over", turn=None, drawn=False, winner=winner,
                        winners=winners)  # fmt: skip
            return data, events
        events.append(
            {"type": "deal", "deal": data["deal"] + 1, "dealer": next_dealer(data, loser)}
        )
        return data, events
    if taken and rules["after_capture"] == "turn_up" and data["stock"]:
        card = data["stock"].pop(0)
        data["bank"] = [{"card": card, "by": None}]
        data["target"] = {"card": card, "by": None, "virtual": False}
        data["idle"] = 0
        events.append({"type": "turn_up", "card": card})
    turn = next_holder(data["hands"], seat)
    data["drawn"] = False
    after_seven = rules["after_seven"]
    if seven and after_seven != "none":
        if after_seven in ("draw_then_play", "skip_and_draw") and data["stock"]:
            card = data["stock"].pop(0)
            data["hands"][turn] = canonical([*data["hands"][turn], card])
            data["idle"] = 0
            data["drawn"] = after_seven == "draw_then_play"
            events.append({"type": "draw", "seat": turn, "card": card, "forced": True})
        if after_seven in ("skip", "skip_and_draw"):
            events.append({"type": "skip", "seat": turn})
            turn = next_holder(data["hands"], turn)
    data["turn"] = turn
    return data, events
