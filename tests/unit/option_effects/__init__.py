"""Every option the table marks honoured or approximated on a backend changes what that
backend does (probes in :mod:`tests.unit.option_effects.probes`)."""
