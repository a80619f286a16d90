"""The demo of `make run`: simulators that play real games, pay deposits and withdrawals and
enter the demo tournaments over HTTP, and the demo tournaments' terms."""
