"""Development tooling, apart from the product: production never imports this package.

- `embedded.py`: an embedded PostgreSQL and Redis under `.data/` for a machine with only Python;
  `environment.py` starts (or attaches to) them and hands their addresses to the settings through
  the environment (`manage.py`, the test settings `tests/settings.py` and `bench/`'s
  start-up call it when `RUMMY_EMBEDDED=1`).
- `supervisor.py`: keeps the processes of `make run` up (restarts what dies, gives up on what
  keeps dying).
- `demo/`: the game-server, payment-gateway and lobby simulators and the demo tournaments.
- `management/commands/`: `serve` (`make run`), `embedded` (start, stop, status), `seed_demo`,
  `seed_games`, `seed_tournaments` and `simulate`.

The settings list this app in INSTALLED_APPS only when `RUMMY_EMBEDDED=1` (by name, without
importing it). It sits above the apps and may import them; the apps, the settings, the URLs,
WSGI and Celery never import it (tests/architecture/test_dev_boundary.py holds them to it).
"""
