from django.db import models

from wallets.models import ApiClient


class IdempotencyRecord(models.Model):
    """The first response to a write, replayed for a repeat with the same key and body: its
    body as the client received it, byte for byte (a JSON column would reorder its keys)."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=128)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    body = models.TextField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "key"], name="idempotency_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id}:{self.key}"
