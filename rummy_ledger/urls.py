from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from tournaments.api.hands import HandEvaluateView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("wallets.api.urls")),
    path("api/v1/", include("tournaments.api.urls")),
    path("api/v1/hands/evaluate", HandEvaluateView.as_view(), name="hands-evaluate"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
]
