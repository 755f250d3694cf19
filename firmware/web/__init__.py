"""The live web page: the referee loop's verdicts, read-only, for phones on the local network.

:mod:`.live` is the loop's side (it builds the page's state after each change and hands it over
without waiting), :mod:`.server` the aiohttp server in a thread of its own, :mod:`.archive` the
finished games, ``static/`` the page itself (no build step, no CDN)."""
