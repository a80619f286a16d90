from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from rummy_ledger import health
from rummy_ledger.metrics.http import metrics_view
from rummy_ledger.staff import views as staff_views

# The finance admin names the product; "View site" opens the API docs (there is no other site).
admin.site.site_header = "rummy-ledger finance"
admin.site.site_title = "rummy-ledger finance"
admin.site.index_title = "Ledger, games and reports"
admin.site.site_url = "/api/docs/"
# The home page lists every model: the sidebar repeating it would take a quarter of a laptop
# screen (1366 px) from the lists.
admin.site.enable_nav_sidebar = False

# The apps' endpoints are named by their URL modules' paths: this module imports no app's code.
urlpatterns = [
    # the second factor's pages, before the admin's catch-all
    path("admin/second-factor/", staff_views.verify, name="staff-verify"),
    path("admin/second-factor/enrol/", staff_views.enrol, name="staff-enrol"),
    path("admin/", admin.site.urls),
    # for load balancers and Prometheus (docs/operations.md); not under /api/: no API key
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("api/v1/", include("wallets.api.urls")),
    path("api/v1/", include("tournaments.games.api.urls")),
    path("api/v1/", include("tournaments.tournaments.api.urls")),
    path("api/v1/", include("tournaments.leaderboards.api.urls")),
    path("api/v1/", include("rummy_ledger.events.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
]

# Under /api/ every error is the JSON envelope, even those raised before a view is found.
handler400 = "rummy_ledger.api.errors.handler400"
handler404 = "rummy_ledger.api.errors.handler404"
handler500 = "rummy_ledger.api.errors.handler500"
# A refused admin page is the admin's own page, with its header and the reason.
handler403 = "wallets.admin.base.permission_denied"
