"""``sbatch-k8s controller``: release dependent and ``--begin`` jobs and record the ends of
jobs continuously (optional; :mod:`sbatch_k8s.backends.kubernetes.control.reconcile`).

In the cluster it runs as ``deploy/controller.yaml``'s Deployment, with the in-cluster
ServiceAccount; anywhere else with the kubeconfig, as the commands do. It serves the
namespaces of the configured partitions (and those given with ``-n``).
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Optional, Set, Tuple

import click


@click.command(name="controller")
@click.option("-n", "--namespace", "namespaces", multiple=True, metavar="NAMESPACE",
              help="serve this namespace too (repeatable; default: the partitions' "
                   "namespaces, else the context's)")
@click.option("--lease-namespace", metavar="NAMESPACE",
              help="namespace of the leader-election Lease (default: the context's)")
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="seconds between passes when no change wakes the controller")
@click.option("--once", is_flag=True, help="run one pass and exit (no lease, no watch)")
@click.option("-v", "--verbose", is_flag=True, help="log each lease change and pass")
def command(namespaces: Tuple[str, ...], lease_namespace: Optional[str], interval: float,
            once: bool, verbose: bool) -> None:
    """Release jobs whose dependencies or begin time came, and record ended jobs."""
    from sbatch_k8s.backends.kubernetes.api.client import connect
    from sbatch_k8s.backends.kubernetes.control.reconcile import Controller, reconcile_once
    from sbatch_k8s.config_file import load_config

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s sbatch-k8s controller: %(message)s")
    environ = dict(os.environ)
    config, _ = load_config(environ)
    client = connect(environ)
    default = client.target.namespace
    served: Set[str] = set(namespaces) | {p.namespace or default for p in config.partitions}
    served = served or {default}
    if once:
        looked = reconcile_once(client, served)
        click.echo(f"looked at {looked} active jobs in {', '.join(sorted(served))}")
        return
    controller = Controller(lambda: connect(environ), served,
                            lease_namespace or default, interval)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: controller.stop())
    controller.run()
