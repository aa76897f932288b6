"""Run the emulated control plane by hand: ``python -m tests.apiserver --kubeconfig-out PATH``.

Prints the URL, writes a kubeconfig (server, bearer token, context ``emulated``, namespace
``default``) and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import List, Optional

from tests.apiserver.cluster import EmulatedCluster


def main(argv: Optional[List[str]] = None) -> int:
    """Parse options, serve, stop cleanly on a signal."""
    parser = argparse.ArgumentParser(prog="python -m tests.apiserver",
                                     description="Emulated Kubernetes control plane (tests).")
    parser.add_argument("--kubeconfig-out", required=True, help="where to write a kubeconfig")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--namespace", action="append", default=[],
                        help="extra namespace to create (repeatable)")
    parser.add_argument("--token", default=None, help="bearer token (default: random)")
    parser.add_argument("--require-token", action="store_true",
                        help="refuse requests without a bearer token (kubectl sends none "
                             "over plain HTTP, so by default they act as the admin)")
    parser.add_argument("--tls", action="store_true",
                        help="serve HTTPS with a CA made at start (in the kubeconfig)")
    options = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    cluster = EmulatedCluster(namespaces=["default", *options.namespace], port=options.port,
                              token=options.token, kubeconfig_path=options.kubeconfig_out,
                              allow_anonymous=not options.require_token, tls=options.tls)
    with cluster:
        print(cluster.url, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
