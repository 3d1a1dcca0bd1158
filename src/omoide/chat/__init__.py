"""One chat and its parts: the session, the turn (reply stream), navigation,
your hand on memory, scene turns, the diary tool's form, token counting, and
the runtime that opens sessions for a client."""
