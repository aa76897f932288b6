"""The node agent: slurmd's part, one per node of a job.

``runtime node`` (:mod:`.node`) makes a pod or a local process a Slurm node: its settings
and its job's description (:mod:`.node_setup`), the node file the job's commands read
(:mod:`.node_file`), a local node's own namespaces (:mod:`.node_namespace`), where the other
agents listen (:mod:`.addresses`), the contract profile's files (:mod:`.profile_files`) and
the commands put first on the job's ``PATH`` (:mod:`.shims`). Every node serves its agent
(:mod:`.service`: launches, control, ping); node 0 then becomes the batch host
(:mod:`sbatch_k8s.runtime.batch_host`), the others serve until it says the job is over
(:mod:`.worker`).
"""
