"""Plain-text output of a conversation's events, on a terminal or into a pipe.

``ask_output`` is how ``ask`` writes a turn (the answer on stdout, the rest on stderr, or JSON
Lines) and ``citations`` how the answer's citations of the browser's pages are numbered. Above the
conversation core and below its users: the command line prints with it, ``bench`` measures it.
"""
