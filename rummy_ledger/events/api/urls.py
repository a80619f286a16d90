from django.urls import path

from rummy_ledger.events.api import views

urlpatterns = [
    path("events", views.EventsView.as_view(), name="events"),
    path("webhook-endpoints", views.EndpointsView.as_view(), name="webhook-endpoints"),
    path(
        "webhook-endpoints/<int:endpoint_id>",
        views.EndpointView.as_view(),
        name="webhook-endpoint",
    ),
]
