"""Everything that measures (``manage.py bench`` and ``pagebench``); nothing here is imported
by the running app."""
