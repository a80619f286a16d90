"""Games and what they pay: templates, games, deals, settlement, and the pure pieces they stand
on: the rules engine (`rummy/`), the formats (`formats/`), the terms (`terms`) and the payout
formulas (`payouts`), none of which imports Django.

Owns: game state (templates, games, seats, deals and the transfers they posted), settlement,
the games' reconciliation checks and admin. May use `wallets` (its services and models) to move
money, always through the ledger's services; may not write to the ledger's tables itself, nor
import the API layer from its services (but for the model of its callers, `ApiClient`: a game
or a tournament is a client's).
"""
