"""Warm processes: commands served without a Python start-up each.

:mod:`.fork_server` loads the machinery once and forks a child per request; :mod:`.fork_client`
is the small client that hands it the command's arguments, environment and stdio. Node 0's
step server and the per-user command server both use them. :mod:`.bytecode_cache` keeps the
runtime zipapp's compiled modules across starts.
"""
