"""Webhooks: a client's endpoints (`endpoints.py`), the address rules a URL must pass when it is
registered and again at each delivery (`addresses.py`), the signature (`signing.py`) and the
deliveries, a table that is their queue (`delivery.py`)."""
