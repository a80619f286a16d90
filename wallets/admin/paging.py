"""Paging big tables (entries, transfers, games, deals, players) without counting them.

Django admin counts the whole filtered queryset to draw its page links: on a million entries
that count is the slowest query of the page. `LargeTablePaginator` counts at most `CAP` rows
(`SELECT count(*) FROM (... LIMIT CAP + 1)`, which stops early), and for a list with no filter
at all reads PostgreSQL's own estimate of the table's size (`pg_class.reltuples`, kept by
autovacuum's ANALYZE). The page says which it is: "about 1,000,000 entries", "more than 10,000
entries" (`admin/<app>/pagination.html`).
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db import connection
from django.utils.functional import cached_property

from wallets.selectors import count_capped

CAP = 10_000


def table_estimate(model) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
            [model._meta.db_table],
        )
        row = cursor.fetchone()
    return max(int(row[0]) if row else 0, 0)


class LargeTablePaginator(Paginator):
    estimated = False  # the count is PostgreSQL's estimate of the whole table
    capped = False  # there are more than CAP rows

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        unfiltered = not queryset.query.where
        if unfiltered and (estimate := table_estimate(queryset.model)) > CAP:
            self.estimated = True
            return estimate
        counted = count_capped(queryset, CAP)
        self.capped = counted > CAP
        return min(counted, CAP)
