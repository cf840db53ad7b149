"""The one deal codec (`engine.deal_json`): a deal goes to JSON and back unchanged."""

from __future__ import annotations

import json

import pytest

from engine.deal_json import deal_to_json, parse_deal
from engine.errors import EngineError
from tests.conftest import domeng
from tests.kozelkit import kozel


@pytest.mark.parametrize("seed", range(20))
def test_a_deal_round_trips_through_its_json_D10_K1(seed: int) -> None:
    for rules in (domeng(), kozel(2), kozel(4)):
        deal = rules.deal_from_seed(seed)
        for key in ("rest", rules.rest_name):
            text = json.dumps(deal_to_json(deal, key))
            back = parse_deal(json.loads(text), rules.hand_sizes(), key)
            assert back == deal and back.rest == deal.rest
            assert json.dumps(deal_to_json(back, key)) == text


def test_the_store_shape_is_hands_then_rest() -> None:
    deal = domeng().deal_from_seed(7)
    out = deal_to_json(deal)
    assert list(out) == ["hands", "rest"]
    assert [len(h) for h in out["hands"]] == [5] * 5 and len(out["rest"]) == 3


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda d: d.pop("rest"), "invalid_deal"),
        (lambda d: d["hands"].pop(), "invalid_deal"),
        (lambda d: d["hands"][0].__setitem__(0, "7-7"), "invalid_tile"),
        (lambda d: d["hands"][0].__setitem__(0, d["hands"][1][0]), "invalid_deal"),
        (lambda d: d["rest"].append(d["hands"][0].pop()), "invalid_deal"),
    ],
)
def test_a_broken_deal_is_refused_with_a_stable_code(mutate: object, code: str) -> None:
    data = deal_to_json(domeng().deal_from_seed(3))
    assert callable(mutate)
    mutate(data)
    with pytest.raises(EngineError) as caught:
        parse_deal(data, domeng().hand_sizes())
    assert caught.value.code == code


def test_not_an_object_is_not_a_deal() -> None:
    with pytest.raises(EngineError, match="a deal is an object"):
        parse_deal([["0-0"]])
