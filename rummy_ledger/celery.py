import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

from rummy_ledger.heap import freeze_startup_heap

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")

app = Celery("rummy_ledger", task_cls="rummy_ledger.tasks:AfterCommitTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect  # the worker's own process: where a `--pool solo` worker runs its tasks
@worker_process_init.connect  # each child of a prefork pool
def _freeze_startup_heap(**kwargs) -> None:
    freeze_startup_heap()
