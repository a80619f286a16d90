"""Games and tournaments, and what they pay, in two parts: `games/` (templates, games, deals,
settlement) and `tournaments/` (scheduling, registration into escrow, rounds, prizes), each with
its models, terms, services, api and admin. The pure pieces they stand on import no Django: the
rules engine (`rummy/`), the formats (`games/formats/`), both parts' terms and the payout
formulas they share (`payouts`).

Owns: game and tournament state (templates, games, seats, deals, tournaments, registrations and the
transfers they posted), settlement, their reconciliation checks and admin. May use `wallets` (its
services and models) to move money, always through the ledger's services; may not write to the
ledger's tables itself, nor import the API layer from its services (but for the model of its
callers, `ApiClient`: a game or a tournament is a client's).
"""
