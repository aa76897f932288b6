"""The platforms' vocabulary: what the workload kinds and the training platforms call things.

The targets' and contracts' names (:mod:`.target_names`), each platform's variables and the
Slurm facts they carry, both ways (:mod:`.contract_facts`), the contract profiles that give our
own jobs a platform's variables and files (:mod:`.contract_profiles`), a platform's per-task
variables in Slurm's layout (:mod:`.contract_variables`), and which variables each platform
sets, for the pitfall rules (:mod:`.platform_names`). Pod-side: standard library only.
"""
