"""``harmony-chat conform``: a black-box audit of any gpt-oss server against the harmony and raw-CoT guides.

Each check (``checks/``) tests one clause of a guide (``guide.py``) through named requests
(``probes.py``) that a session (``session.py``) sends once over a transport (``transport.py``:
live HTTP, or a recording replayed); ``readers.py`` reads the replies, ``runner.py`` runs the
checks, ``report.py`` prints the table or JSON, and ``command.py`` ties them together for the CLI.
"""
