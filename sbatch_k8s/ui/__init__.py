"""``sbatch-k8s ui``: a web console over the same jobs the Slurm commands show.

Layout, by role:

* :mod:`.jobs_source` — the console's one seam to where jobs run: it alone imports the
  backends and the commands' modules (an import-linter contract says so). It answers in the
  value types of :mod:`.views`; what no backend offers yet is an :class:`.views.Unavailable`
  saying so, shown as such by the page, never made up.
* :mod:`.job_table`, :mod:`.job_detail`, :mod:`.reasons`, :mod:`.cluster_view` — what the
  pages show, from Slurm's records, worded with the commands' own field tables
  (:mod:`parsers.formats`).
* :mod:`.live` — one poller per console: the job table pushed to every open page
  (server-sent events) as changes, never as reloads.
* :mod:`.access` — who may talk to the console: the token printed by the command, from this
  machine's loopback only, and only processes of the user who started it.
* :mod:`.routes`, :mod:`.app` — the HTTP endpoints (aiohttp) and the server's start.
* ``static/`` — the page itself: plain HTML, CSS and JavaScript shipped in the wheel, no
  build step, nothing fetched at run time; charts are SVG drawn by ``charts.js``.

The console runs in the user's own process (the command in the foreground), not in the
per-user command server: that server forks one child per command and exits when idle or
when its code changes, which would cut every open page. The commands the console runs for
the user (``sbatch``) still go through that server, as from a shell.
"""
