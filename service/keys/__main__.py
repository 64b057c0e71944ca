"""`python -m service.keys new NAME`: a fresh integrator key, shown once, and its `API_KEYS`
entry. A module of its own, which the service never imports: run as `service/keys.py`,
the command was imported once by the package `service` (through the sessions) and then run
again as __main__, and Python warned of it on every run."""

import sys
from collections.abc import Sequence

from service.hosted.tokens import digest
from service.keys import NAME, new_key


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or argv[0] != "new" or not NAME.fullmatch(argv[1]):
        print("usage: python -m service.keys new NAME  (NAME: 1 to 64 of A-Z a-z 0-9 . _ -)")
        return 2
    key = new_key()
    print(f"key (shown once, give it to the integrator): {key}")
    print(f"API_KEYS entry: {argv[1]}:{digest(key)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
