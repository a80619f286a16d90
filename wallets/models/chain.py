"""The hash chain through the ledger (wallets/chain/): one link per transfer in commit order, and
the chain's head at the end of each day, which finance publishes.

Both tables are append-only (the ledger's trigger `ledger_append_only`): a link, once written, is
what later verification compares the recomputed chain with."""

from django.db import models
from django.db.models import Q

from wallets.models.double_entry import Transfer


class ChainLink(models.Model):
    """Link `seq` of the chain: the hash over its transfer's content (and, for a settlement, the
    deal that caused it) and link `seq - 1`'s hash. `txid` is the transfer's transaction id, where
    the job's commit-order reader goes on from."""

    seq = models.BigIntegerField(primary_key=True)
    transfer = models.OneToOneField(Transfer, on_delete=models.PROTECT, related_name="+")
    txid = models.BigIntegerField()
    hash = models.CharField(max_length=64)
    chained_at = models.DateTimeField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(seq__gte=1), name="chain_link_seq")]

    def __str__(self) -> str:
        return f"link {self.seq}: transfer {self.transfer_id}"


class ChainDigest(models.Model):
    """The chain's head at the end of one day (platform time zone): link `through_seq`, the
    last one chained before midnight, and its hash; `links` were chained that day."""

    day = models.DateField(primary_key=True)
    through_seq = models.BigIntegerField()
    head = models.CharField(max_length=64, help_text="The hash of link `through_seq`.")
    links = models.PositiveIntegerField()
    recorded_at = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"{self.day}: {self.head}"
