"""The sans-I/O core: pure code over bytes, records and the current time.

Nothing in this package imports trio, asyncio, sqlite3 or sockets; randomness comes in as a
``random.Random`` and time as a number of seconds since the Unix epoch (``now``).
"""
