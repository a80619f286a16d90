"""Staff access to the finance admin: the second factor (django-otp's TOTP, recovery codes as its
static device), how long a staff session lasts, and the one audit list of what staff did.

- second_factor.py: who needs a second factor, enrolment, verification, a superuser's reset;
- sessions.py: a staff session ends after STAFF_IDLE_MINUTES idle and STAFF_SESSION_HOURS in all;
- middleware.py: the admin's gate (the session's limits, then the second factor);
- views.py: the verify and enrol pages (thin); admin.py: the audit list and its CSV, the reset;
- audit.py: `audit_record`, the one way an audit event is written (an append-only table: a
  trigger refuses UPDATE and DELETE).

It imports no app: the apps call `audit_record` for what they own (proposals, decisions, exports,
keys).
"""
