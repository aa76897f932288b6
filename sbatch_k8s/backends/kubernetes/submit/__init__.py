"""``sbatch`` on a cluster: a submission plan becomes objects, and nothing is half-created.

:mod:`.schedule` runs a submission (or ``--test-only``'s dry run) under ids from the cluster's
one counter (:mod:`.job_ids`), as the submitter the cluster knows (:mod:`.submitter`), one
attempt per id (:mod:`.attempts`) creating every object and taking them back on failure
(:mod:`.create_objects`). :mod:`.node_shape` reads the size of a partition's nodes for
``--exclusive``; :mod:`.carried_config` gives a job the configuration its commands read.
"""
