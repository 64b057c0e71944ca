"""A rule option's declared shape is the one truth of what it takes: `shapes.conforms`
honours every keyword the helpers of engine/shapes.py write, as openapi.yaml (which
documents the same shape) does, and `shapes.demand` says it in words. The shipped games
declare only integers, choices, booleans and an array without a maximum; a new game's
string or nested-list option must not be taken past its declared bounds, and its number
option (a fraction) must be taken at all."""

import pytest

from engine import shapes

LABEL = shapes.string("a label", minLength=1, maxLength=5, pattern="^[a-z]+$")
# A fraction: JSON's number, which an integer also is (a boolean never).
FACTOR = {"type": "number", "minimum": 0.5, "maximum": 2}
LOTS = shapes.array(
    shapes.array(shapes.integer(1, 9), minItems=1, maxItems=3), minItems=1, maxItems=2
)


@pytest.mark.parametrize(
    ("shape", "value", "taken"),
    [
        (LABEL, "abc", True),
        (LABEL, "abcdef", False),  # longer than maxLength
        (LABEL, "", False),  # shorter than minLength
        (LABEL, "ab1", False),  # not matching the pattern
        (LOTS, [[1], [9, 9, 9]], True),
        (LOTS, ((1, 2),), True),  # a tuple from Python reads as a list
        (LOTS, [[1], [1], [1]], False),  # more lots than maxItems
        (LOTS, [[1, 1, 1, 1]], False),  # a lot longer than its maxItems
        (LOTS, [[]], False),
        (FACTOR, 1.0, True),
        (FACTOR, 2, True),
        (FACTOR, 2.5, False),
        (FACTOR, True, False),
        (FACTOR, "1", False),
        (shapes.choice(0.5, 1.5), 1.5, True),
    ],
)
def test_an_option_is_taken_exactly_as_its_shape_says(shape, value, taken):
    assert shapes.conforms(shape, value) is taken


def test_the_words_name_every_bound():
    assert shapes.demand(LABEL) == "a string of 1 to 5 characters matching ^[a-z]+$"
    assert shapes.demand(LOTS) == (
        "a list of 1 to 2 items drawn from a list of 1 to 3 items drawn from an integer "
        "from 1 to 9"
    )
    assert shapes.demand(FACTOR) == "a number from 0.5 to 2"
    assert shapes.demand(shapes.array(shapes.choice(2, 4), minItems=1)) == (
        "a non-empty list drawn from 2 or 4"
    )
