"""The Job controller: keeps ``parallelism`` pods running until ``completions`` succeeded.

A pod that is evicted or deleted before it succeeded is replaced (a new ``<job>-<5 random>``);
terminating pods do not count as active. When enough pods succeeded the Job gets the
``Complete`` condition and no more pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.controllers.base import (
    OwnerController,
    active,
    create_from_template,
    owned_by,
    write_status,
)
from kubesim.pod_objects import pod_ready
from kubesim.resources import JOBS, PODS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


class JobController(OwnerController):
    KIND = "Job"

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        entry = cluster.store.get(JOBS, namespace, name)
        if entry is None or entry.meta.get("deletionTimestamp"):
            return
        spec = entry.obj.get("spec") or {}
        status = entry.obj.get("status") or {}
        parallelism = int(spec.get("parallelism", 1))
        completions = int(spec.get("completions") or 1)
        pods = [e.obj for e in owned_by(cluster, PODS, entry)]
        succeeded = max(
            int(status.get("succeeded", 0)),
            sum(1 for p in pods if p.get("status", {}).get("phase") == "Succeeded"),
        )
        failed = sum(1 for p in pods if p.get("status", {}).get("phase") == "Failed")
        live = [p for p in pods if active(p)]
        done = succeeded >= completions
        if not done and not spec.get("suspend"):
            wanted = min(parallelism, completions - succeeded)
            uid = entry.meta.get("uid", "")
            labels = {
                "batch.kubernetes.io/job-name": name,
                "job-name": name,
                "batch.kubernetes.io/controller-uid": uid,
                "controller-uid": uid,
            }
            for _ in range(wanted - len(live)):
                created = create_from_template(
                    cluster,
                    entry,
                    spec.get("template") or {},
                    generate_name=f"{name}-",
                    extra_labels=labels,
                )
                if created is None:
                    break
                live.append(created.obj)
        new_status = {
            "active": len(live),
            "ready": sum(1 for p in live if pod_ready(p)),
            "succeeded": succeeded,
            "failed": failed,
            "startTime": status.get("startTime") or cluster.now(),
        }
        if done and not status.get("completionTime"):
            now = cluster.now()
            new_status["completionTime"] = now
            new_status["conditions"] = [
                {"type": "Complete", "status": "True", "lastTransitionTime": now}
            ]
        write_status(cluster, JOBS, entry, new_status)
