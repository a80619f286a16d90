"""Events and webhooks: what happened to a client's money, told to that client.

An event (`models.Event`) is written by the service that makes the change, in its transaction,
through one helper (`record.events_record`): a rollback writes none. Its data is what the API
answers about the object at that commit, built by the app's own output functions (its
`api/serializers.py`), which each app registers as the renderer of its event types (the
`event_renderers` kind of `rummy_ledger/plugins.py`): the domain names no serializer, and this
package names no app.

A client reads its events from the feed (`feed.py`, `GET /api/v1/events`) or has them POSTed to its
webhook endpoints (`webhooks/`): deliveries are a table that is their queue, drained by a Celery
task on its own queue.
"""
