"""Optimistic concurrency: a counter allocated by compare-and-swap loses no update."""

from __future__ import annotations

import random
import threading
import time
from typing import Any, List

from kubernetes import client

from tests.apiserver import EmulatedCluster

WRITERS = 50


def test_fifty_writers_allocate_distinct_values(cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "counter"},
                                                  "data": {"next": "0"}})
    got: List[int] = []
    conflicts: List[int] = []
    lock = threading.Lock()
    start = threading.Barrier(WRITERS)

    def allocate() -> None:
        api = client.CoreV1Api(cluster.api_client())
        start.wait(timeout=30)
        for attempt in range(1000):
            current = api.read_namespaced_config_map("counter", "default")
            value = int(current.data["next"])
            current.data["next"] = str(value + 1)
            try:
                api.replace_namespaced_config_map("counter", "default", current)
            except client.ApiException as error:
                assert error.status == 409
                with lock:
                    conflicts.append(1)
                time.sleep(random.uniform(0, 0.005 * min(attempt + 1, 10)))  # jittered backoff
                continue
            with lock:
                got.append(value)
            return

    threads = [threading.Thread(target=allocate) for _ in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(got) == list(range(WRITERS))
    final = core.read_namespaced_config_map("counter", "default")
    assert final.data["next"] == str(WRITERS)
    assert conflicts, "50 racing writers should have seen at least one 409"


def test_concurrent_creates_of_one_name(cluster: EmulatedCluster) -> None:
    results: List[Any] = []

    def create() -> None:
        api = client.CoreV1Api(cluster.api_client())
        try:
            api.create_namespaced_config_map("default", {"metadata": {"name": "once"}})
            results.append(201)
        except client.ApiException as error:
            results.append(error.status)
    threads = [threading.Thread(target=create) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == [201] + [409] * 9
