"""The project package: settings, URLs, the Celery app, the API layer (`rummy_ledger.api`) and
the domain-error base classes; the development tooling lives apart in `rummy_ledger.dev`, which
nothing else imports. The Celery app is loaded by the app
config's ready() (and found by `celery -A rummy_ledger`), so importing `rummy_ledger.errors`
pulls in no framework."""
