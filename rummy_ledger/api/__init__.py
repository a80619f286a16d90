"""The REST API's own layer, shared by the apps' endpoints (`wallets.api`, `tournaments.api`):
API-key authentication and scopes, the error envelope and its code catalogue, `Idempotency-Key`
handling and its record. Domain code never imports it; it imports the domains."""
