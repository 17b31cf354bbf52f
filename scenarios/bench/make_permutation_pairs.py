#!/usr/bin/python3
"""Writes (or checks) the Perm-N traffic pairs shared with the peer simulators.

The recipe is the one in /work/shared/benchmarks.md ("Traffic"), run with CPython's `random`
(Mersenne Twister), so the pairs are identical to the ones the peers' figures were measured on:

    random.seed(13); s = list(range(N)); d = list(range(N))
    random.shuffle(s); random.shuffle(d)
    for n in range(N): if s[n] == d[n]: swap d[n] and d[(n + 1) % N]
    flow i is s[i] -> d[i]

The output is one "src->dst" line per flow, in flow order, each ending in a newline. Its SHA-256
must start with the prefix the benchmark notes give; the script refuses to write a file that does
not match, and reports self-pairs (a host sending to itself), which the recipe is meant to exclude.

Usage:
    make_permutation_pairs.py           write perm_128.pairs, perm_1024.pairs and perm_8192.pairs next to this script
    make_permutation_pairs.py --check   only verify the committed files, byte for byte
"""

import argparse
import hashlib
import pathlib
import random
import sys

# N -> first 16 hex digits of the SHA-256 of the pairs text, from benchmarks.md.
EXPECTED_SHA256_PREFIX = {
    128: "105783a83cf2b003",
    1024: "f7e15f6dfcab3d76",
    8192: "16c74beec8d0b551",
}
SEED = 13


def permutation_pairs(n):
    """The benchmark's pairs for n hosts, as a list of (source, destination)."""
    random.seed(SEED)
    sources = list(range(n))
    destinations = list(range(n))
    random.shuffle(sources)
    random.shuffle(destinations)
    for i in range(n):
        if sources[i] == destinations[i]:
            j = (i + 1) % n
            destinations[i], destinations[j] = destinations[j], destinations[i]
    return list(zip(sources, destinations))


def pairs_text(pairs):
    return "".join(f"{s}->{d}\n" for s, d in pairs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="verify the committed files instead of writing them")
    parser.add_argument("--dir", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent,
                        help="where the .pairs files live (default: next to this script)")
    args = parser.parse_args()

    failed = False
    for n, expected in EXPECTED_SHA256_PREFIX.items():
        pairs = permutation_pairs(n)
        text = pairs_text(pairs).encode("ascii")
        digest = hashlib.sha256(text).hexdigest()
        self_pairs = sum(1 for s, d in pairs if s == d)
        path = args.dir / f"perm_{n}.pairs"
        ok = digest.startswith(expected) and self_pairs == 0
        print(f"N={n}: sha256 {digest[:16]} (expected {expected}), self-pairs {self_pairs}: "
              f"{'ok' if ok else 'MISMATCH'}")
        if not ok:
            failed = True
            continue
        if args.check:
            if not path.is_file() or path.read_bytes() != text:
                print(f"  {path}: missing or differs from the recipe")
                failed = True
            else:
                print(f"  {path}: identical")
        else:
            path.write_bytes(text)
            print(f"  wrote {path} ({n} flows)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
