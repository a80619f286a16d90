"""The REST API's own layer, shared by the apps' endpoints (`wallets.api`, `tournaments.games.api`,
`tournaments.tournaments.api`): the API clients and their keys (`models`, `keys`, `admin`,
`manage.py create_api_client`), API-key authentication and scopes, the scoped view base and the one
way a body is validated (`views`), the error envelope and its code catalogue, `Idempotency-Key`
handling and its record.

It imports no app: the apps hand it their error codes at `AppConfig.ready()` (`error_codes`, through
`rummy_ledger/plugins.py`) and the project's URLconf names their URL modules. The apps import it;
their domain code (services, formats) only the callers' model, `models.ApiClient`."""
