import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")

app = Celery("rummy_ledger", task_cls="rummy_ledger.tasks:AfterCommitTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
