"""Date and time formats for the admin's own display (`FORMAT_MODULE_PATH`): a finance user
reads `2026-11-23 14:05:09 IST`, as `wallets.money.formatting.ist` writes it, not `Nov. 23, 2026,
4:05 p.m.`. Django's locale formats win over the `DATETIME_FORMAT` setting, hence a module."""
