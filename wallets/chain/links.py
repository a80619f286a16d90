"""The job that extends the chain: every committed transfer, in commit order, gets its link, and
each day that has ended gets its digest.

Transfers are read with the commit-order reader (rummy_ledger/commit_order.py) from the position
of the last link (its transfer's txid and id): a transfer whose transaction took an earlier id
but committed later is chained when it commits, never skipped, and nothing is chained before
every transaction older than it has finished. Postings never wait for the chain: the job runs
after the fact (beat, every CHAIN_EXTEND_SECONDS), one batch per transaction under an advisory
lock, so two runs never interleave and a posting takes no lock the job holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from rummy_ledger import commit_order
from wallets.chain.canonical import GENESIS, link_hash
from wallets.chain.contents import transfer_contents
from wallets.models import ChainDigest, ChainLink, Transfer

CHAIN_LOCK = 0x63686169  # one bigint per advisory lock; the digits spell "chai"

COMMITTED_SQL = f"""
SELECT id, txid::text::bigint FROM {Transfer._meta.db_table}
 WHERE {commit_order.after()}
 ORDER BY txid, id
 LIMIT %(limit)s
"""


@dataclass(frozen=True)
class Head:
    """The last link: its number, hash and where the reader goes on from."""

    seq: int
    hash: str
    position: commit_order.Position


def chain_head() -> Head:
    last = ChainLink.objects.order_by("-seq").values_list("seq", "hash", "txid", "transfer_id")
    found = last.first()
    if found is None:
        return Head(0, GENESIS, commit_order.START)
    seq, hash_, txid, transfer_id = found
    return Head(seq, hash_, commit_order.Position(txid, transfer_id))


def _locked(*, wait: bool) -> bool:
    """Take the chain's lock for this transaction (waiting for it, or not)."""
    with connection.cursor() as cursor:
        if wait:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK])
            return True
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [CHAIN_LOCK])
        return cursor.fetchone()[0]


def _batch_chain(*, wait: bool, limit: int) -> int | None:
    """Chain up to `limit` committed transfers in one transaction; None when another run holds
    the lock (and `wait` is false)."""
    with transaction.atomic():
        if not _locked(wait=wait):
            return None
        head = chain_head()
        with connection.cursor() as cursor:
            cursor.execute(
                COMMITTED_SQL, {**commit_order.after_parameters(head.position), "limit": limit}
            )
            committed = cursor.fetchall()
            if not committed:
                return 0
            cursor.execute("SELECT clock_timestamp()")  # after the lock: ordered as seq is
            (chained_at,) = cursor.fetchone()
        contents = transfer_contents([transfer_id for transfer_id, _ in committed])
        links, prev = [], head.hash
        for seq, (transfer_id, txid) in enumerate(committed, start=head.seq + 1):
            prev = link_hash(prev, contents[transfer_id].content)
            links.append(ChainLink(seq=seq, transfer_id=transfer_id, txid=txid, hash=prev,
                                   chained_at=chained_at))  # fmt: skip
        ChainLink.objects.bulk_create(links)
        return len(links)


def chain_extend(*, wait: bool = False, limit: int | None = None) -> int:
    """Chain every transfer committed so far (in batches of CHAIN_BATCH), then record the
    digests of the days that have ended; returns how many links were added. Without `wait` a
    run finding another one at work leaves it to that one (beat's job); with it, it waits its
    turn and goes on (verify_ledger)."""
    limit = limit or settings.CHAIN_BATCH
    added = 0
    while True:
        chained = _batch_chain(wait=wait, limit=limit)
        if chained is None:
            return added
        added += chained
        if chained < limit:
            break
    digests_record()
    return added


def _day_end(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))


def digests_record(*, today: date | None = None) -> int:
    """Record the digest of every day before `today` (the platform's, by default) since the last
    one recorded: the last link chained before the day's midnight. Returns how many."""
    today = today or timezone.localdate()
    with transaction.atomic():
        _locked(wait=True)
        last = ChainDigest.objects.order_by("-day").first()
        first_link = ChainLink.objects.order_by("seq").values_list("chained_at", flat=True).first()
        if first_link is None:
            return 0
        day = last.day + timedelta(days=1) if last else timezone.localdate(first_link)
        through = last.through_seq if last else 0
        recorded = 0
        while day < today:
            found = (
                ChainLink.objects.filter(chained_at__lt=_day_end(day))
                .order_by("-seq")
                .values_list("seq", "hash")
                .first()
            )
            seq, head = found or (0, GENESIS)
            ChainDigest.objects.create(day=day, through_seq=seq, head=head, links=seq - through)
            through, day, recorded = seq, day + timedelta(days=1), recorded + 1
        return recorded
