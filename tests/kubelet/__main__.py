"""``python -m tests.kubelet``: run a test kubelet until interrupted."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import List, Optional

from tests.kubelet.cri_log import LogPolicy
from tests.kubelet.kubelet import TestKubelet


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.kubelet",
        description="Register Ready nodes and run the pods bound to them as local processes.")
    parser.add_argument("--kubeconfig", required=True, help="the API server to serve")
    parser.add_argument("--nodes", type=int, default=1, help="how many nodes (default 1)")
    parser.add_argument("--name-prefix", default="kubelet-",
                        help="node names are PREFIX0..PREFIX<N-1> (default kubelet-)")
    parser.add_argument("--cpus", default="4", help="cpu capacity of each node (default 4)")
    parser.add_argument("--memory", default="16Gi",
                        help="memory capacity of each node (default 16Gi)")
    parser.add_argument("--gpus", type=int, default=0,
                        help="nvidia.com/gpu capacity of each node (default 0)")
    parser.add_argument("--volume-dir",
                        help="map persistentVolumeClaim/nfs/hostPath volumes under this "
                             "directory (without it, pods using them fail)")
    parser.add_argument("--root-dir", help="keep pod files and logs here (default: a "
                        "temporary directory removed on exit)")
    parser.add_argument("--container-log-max-size", type=int, default=10 << 20,
                        help="rotate a container's log at this many bytes (default 10 Mi)")
    parser.add_argument("--container-log-max-files", type=int, default=5,
                        help="log files kept per container, the current one included "
                             "(default 5)")
    parser.add_argument("--container-log-monitor-s", type=float, default=10.0,
                        help="how often logs are looked at for rotation (default 10 s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    """Run until SIGINT or SIGTERM, then kill the pods and unregister the nodes."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    done = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    policy = LogPolicy(args.container_log_max_size, args.container_log_max_files,
                       args.container_log_monitor_s)
    kubelet = TestKubelet(args.kubeconfig, nodes=args.nodes, name_prefix=args.name_prefix,
                          cpus=args.cpus, memory=args.memory, gpus=args.gpus,
                          volume_dir=args.volume_dir, root_dir=args.root_dir,
                          log_policy=policy)
    with kubelet:
        print(f"test kubelet: nodes {', '.join(kubelet.node_names)}; files in "
              f"{kubelet.root_dir}", flush=True)
        while not done.wait(1.0):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
