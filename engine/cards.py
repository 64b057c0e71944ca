"""What every game shares about cards: the two-character notation (rank then suit), reading
the accepted input forms, the canonical order, a deck built from a list of ranks, and the
portable seeded shuffle every game deals from."""

import hashlib
import random
import struct
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Final

from engine.errors import shown

RANKS: Final = "A23456789TJQK"
SUITS: Final = "CDHS"

# Canonical order: suit C < D < H < S, then rank A < 2 < ... < K.
ORDER: Final[dict[str, int]] = {rank + suit: index for index, (suit, rank) in
                         enumerate((suit, rank) for suit in SUITS for rank in RANKS)}  # fmt: skip
# A card's place in that order, the sort key: bound once here rather than looked up on
# ORDER for every sort (the compiled build reads a Final from a C static).
PLACE: Final = ORDER.__getitem__


class CardError(ValueError):
    """A string that is not a card."""


def deck(ranks: str = RANKS) -> tuple[str, ...]:
    """Every card of the given ranks, in canonical order (`deck("6789TJQKA")`: 36 cards)."""
    return tuple(card for card in ORDER if card[0] in ranks)


def parse_card(text: object) -> str:
    """Read a card in any accepted input form (`7D`, `7d`, `10d`) into its canonical form.

    :raises CardError: the text is not a card of the 52.
    """
    if isinstance(text, str):
        if text in ORDER:
            return text
        if not text.isascii():
            # str.upper() makes S of the long s (U+017F) too: not a form the contract or
            # shapes.CARD_PATTERN accepts, so such text must not become a card.
            raise CardError(f"not a card: {shown(text)}")
        card = text.upper().replace("10", "T", 1) if len(text) == 3 else text.upper()
        if card in ORDER:
            return card
    raise CardError(f"not a card: {shown(text)}")


def sort_cards(cards: Iterable[str]) -> list[str]:
    """The cards in canonical order."""
    return sorted(cards, key=PLACE)


def canonical(cards: Iterable[str]) -> tuple[str, ...]:
    """The cards in canonical order, as a tuple."""
    return tuple(sorted(cards, key=PLACE))  # sort_cards's, one call less per hand


def redeal(
    hands: tuple[tuple[str, ...], ...], keep: int, unseen: list[str], rng: random.Random
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """For search over hidden cards: `unseen` shuffled by `rng` and dealt to every hand but
    `keep`'s, each keeping its size (in canonical order); what is left is the stock."""
    rng.shuffle(unseen)
    dealt = []
    for seat, hand in enumerate(hands):
        if seat == keep:
            dealt.append(hand)
        else:
            dealt.append(canonical(unseen[: len(hand)]))
            unseen = unseen[len(hand) :]
    return tuple(dealt), tuple(unseen)


# A SHA-256 block as its four big-endian 64-bit words, unpacked at once.
WORDS_OF_BLOCK = struct.Struct(">4Q").unpack


def random_words(key: bytes, first_block: int = 0) -> Iterator[int]:
    """64-bit words from SHA-256 in counter mode: the same on every machine and Python."""
    counter = first_block
    while True:
        yield from WORDS_OF_BLOCK(hashlib.sha256(key + counter.to_bytes(8, "big")).digest())
        counter += 1


def leading_words(key: bytes, count: int) -> Iterator[int]:
    """`random_words(key)`, its first `count` words hashed and unpacked in one batch (what
    a shuffle that rejects none draws; a word is rejected with a chance below 2**-57), the
    rest from the blocks after them: cheaper than resuming the generator for each word."""
    blocks = (count + 3) // 4
    # The key hashed once and that hash copied for each block: SHA-256 of key + counter as
    # random_words takes it, without a new hash object (dearer than a block) for each.
    keyed = hashlib.sha256(key)
    digests = []
    for counter in range(blocks):
        block = keyed.copy()
        block.update(counter.to_bytes(8, "big"))
        digests.append(block.digest())
    return chain(struct.unpack(f">{4 * blocks}Q", b"".join(digests)), random_words(key, blocks))


# Rejection sampling keeps the words below the largest multiple of the pack's size under
# 2**64, by pack size up to the 52: that long division done once here, not for every card
# of every deal.
LIMITS: Final[tuple[int, ...]] = tuple(
    (1 << 64) - (1 << 64) % size if size else 0 for size in range(53)
)


def shuffled(cards: Iterable[str], key: str) -> tuple[str, ...]:
    """Fisher-Yates driven by `random_words(key)`: the same cards (at most 52) and key give
    the same order everywhere."""
    pack = list(cards)
    return fisher_yates(pack, leading_words(key.encode(), len(pack) - 1))


def fisher_yates(pack: list[str], words: Iterator[int]) -> tuple[str, ...]:
    """`pack` shuffled in place by 64-bit `words`, as a tuple: the card at each place from
    the top down is swapped with one at or above it, picked by the next word, with
    rejection sampling (a word at or above LIMITS of the size is skipped) so that every
    order is equally likely."""
    for size, word in zip(range(len(pack), 1, -1), words):
        while word >= LIMITS[size]:
            word = next(words)
        top, pick = size - 1, word % size
        pack[top], pack[pick] = pack[pick], pack[top]
    return tuple(pack)
