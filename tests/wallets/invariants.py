"""Ledger invariants checked with plain SQL, independently of the code under test."""

from django.db import connection


def ledger_violations() -> list[str]:
    checks = {
        "unbalanced transfer": """
            SELECT transfer_id FROM wallets_entry
            GROUP BY transfer_id, amount_currency HAVING sum(amount) <> 0""",
        "cached balance differs from entries": """
            SELECT a.id FROM wallets_account a
            LEFT JOIN wallets_entry e ON e.account_id = a.id
            WHERE a.kind <> 'platform'
            GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)""",
        "negative player balance": """
            SELECT id FROM wallets_account WHERE kind <> 'platform' AND balance < 0""",
        "currencies do not net to zero": """
            SELECT amount_currency FROM wallets_entry
            GROUP BY amount_currency HAVING sum(amount) <> 0""",
        "entry in a foreign currency": """
            SELECT e.id FROM wallets_entry e JOIN wallets_account a ON a.id = e.account_id
            WHERE a.balance_currency <> e.amount_currency""",
    }
    found = []
    with connection.cursor() as cursor:
        for name, sql in checks.items():
            cursor.execute(sql)
            found += [f"{name}: {row[0]}" for row in cursor.fetchall()]
    return found
