"""Rank lists as people type them, '0-7,64' (as `lockstep nccl-tests --ranks` takes them)."""


def parse_ranks(text):
    """[0, 1, ..., 7, 64] from '0-7,64'; ValueError for anything else."""
    ranks = []
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"'{text}' is not a list of ranks such as 0-7,64")
        ranks.extend(range(int(first), int(last if dash else first) + 1))
    return ranks


def format_ranks(ranks):
    """'0-7,64' from ranks in any order."""
    parts, ranks = [], sorted(int(r) for r in ranks)
    begin = previous = ranks[0]
    for rank in ranks[1:] + [None]:
        if rank is not None and rank == previous + 1:
            previous = rank
            continue
        parts.append(str(begin) if begin == previous else f"{begin}-{previous}")
        begin = previous = rank
    return ",".join(parts)
