"""The chain recomputed from the transfers as they are stored now and compared, link by link,
with the links and the daily digests written when they were chained.

Each link is recomputed from the previous link's stored hash and its transfer's content: a link
differs exactly when its transfer (entries, accounts, amounts, kind, reference, time, or the
deal that caused it) was changed or removed since it was chained, or the link itself was; the
links after it are still checked on their own. When every link matches, the stored chain is the
recomputed one, and the digests finance published name its heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from django.conf import settings

from rummy_ledger.db import read_connection
from wallets.chain.canonical import GENESIS, link_hash
from wallets.chain.contents import TransferContent, transfer_contents
from wallets.models import ChainDigest, ChainLink

LINKS_SQL = f"""
SELECT seq, transfer_id, hash FROM {ChainLink._meta.db_table}
 WHERE seq > %(after)s AND seq <= %(through)s ORDER BY seq LIMIT %(limit)s
"""


@dataclass(frozen=True)
class Difference:
    """One link that does not match: `seq`, its transfer (and what caused it), what differs."""

    seq: int
    transfer_id: int | None
    what: str
    causes: tuple[str, ...] = ()

    def __str__(self) -> str:
        caused = f", caused by {'; '.join(self.causes)}" if self.causes else ""
        return f"link {self.seq}: {self.what}{caused}"


@dataclass
class Verification:
    """What a verification checked (links `after`+1 to `through`) and every difference found
    (the first CHAIN_DIFFERENCES_KEPT of them; `found` counts them all)."""

    after: int
    through: int
    checked: int = 0
    digests: int = 0
    found: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.found == 0

    def add(self, difference: Difference) -> None:
        self.found += 1
        if len(self.differences) < settings.CHAIN_DIFFERENCES_KEPT:
            self.differences.append(difference)


def _difference(seq: int, transfer_id: int, found: TransferContent) -> Difference:
    if found.content is None:
        return Difference(seq, transfer_id, f"transfer {transfer_id} is gone")
    content = found.content
    return Difference(
        seq,
        transfer_id,
        f"transfer {transfer_id} ({content['kind']} {content['reference']}) differs from "
        "what was chained",
        found.causes,
    )


def _links_check(result: Verification, prev: str, wanted: set[int]) -> dict[int, str]:
    """Recompute links after `result.after` through `result.through` in batches, recording
    each difference; returns the stored hashes of the `wanted` links, by seq."""
    stored_at, expected_seq = {}, result.after + 1
    while expected_seq <= result.through:
        with read_connection().cursor() as cursor:
            cursor.execute(LINKS_SQL, {"after": expected_seq - 1, "through": result.through,
                                       "limit": settings.CHAIN_BATCH})  # fmt: skip
            links = cursor.fetchall()
        if not links:
            break
        contents = transfer_contents([transfer_id for _, transfer_id, _ in links])
        for seq, transfer_id, stored in links:
            if seq != expected_seq:
                result.add(
                    Difference(expected_seq, None, f"links {expected_seq}-{seq - 1} are gone")
                )
            found = contents[transfer_id]
            if found.content is None or link_hash(prev, found.content) != stored:
                result.add(_difference(seq, transfer_id, found))
            if seq in wanted:
                stored_at[seq] = stored
            prev, expected_seq = stored, seq + 1
            result.checked += 1
    return stored_at


def chain_verify(*, after: int = 0, through: int | None = None) -> Verification:
    """Verify links `after`+1 to `through` (the last one by default), starting from link
    `after`'s stored hash, and the digests of the days whose last link is in that range."""
    last = ChainLink.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
    result = Verification(after=after, through=last if through is None else through)
    prev = ChainLink.objects.filter(seq=after).values_list("hash", flat=True).first()
    digests = list(
        ChainDigest.objects.filter(through_seq__gt=after, through_seq__lte=result.through)
        .order_by("day")
        .values_list("day", "through_seq", "head")
    )
    stored_at = _links_check(result, prev or GENESIS, {seq for _, seq, _ in digests})
    for day, seq, head in digests:
        if stored_at.get(seq) != head:
            result.add(Difference(seq, None, f"the digest of {day} differs from link {seq}"))
    result.differences.sort(key=lambda d: d.seq)  # the first is the earliest link
    result.digests = len(digests)
    return result


def after_day(since: date | None) -> int:
    """The link a verification `since` a day starts after: the last one chained before it (the
    digest of the day before), or none (0: from the first link)."""
    if since is None:
        return 0
    digest = ChainDigest.objects.filter(day__lt=since).order_by("-day").first()
    return digest.through_seq if digest else 0
