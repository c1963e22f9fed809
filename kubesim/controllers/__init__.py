"""Cluster controllers: workloads (Deployments, ReplicaSets, StatefulSets, Jobs), the
scheduler, the volume binder and the garbage collector. Each reacts to store changes and does
its work on the world's controller thread, as the behaviours do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.controllers.deployment import DeploymentController
from kubesim.controllers.garbage import OWNERS, GarbageCollector
from kubesim.controllers.job import JobController
from kubesim.controllers.replicaset import ReplicaSetController
from kubesim.controllers.scheduler import Scheduler
from kubesim.controllers.statefulset import StatefulSetController
from kubesim.controllers.volumes import VolumeBinder

if TYPE_CHECKING:
    from kubesim.entries import Change
    from kubesim.protocols import SimCluster, SimWorld


class Controllers:
    def __init__(self, world: SimWorld) -> None:
        self.replicasets = ReplicaSetController(world)
        self.deployments = DeploymentController(world)
        self.statefulsets = StatefulSetController(world)
        self.jobs = JobController(world)
        self.scheduler = Scheduler(world)
        self.volumes = VolumeBinder(world)
        self.garbage = GarbageCollector(world)

    def changed(self, cluster: SimCluster, change: Change) -> None:
        resource = change.resource
        if resource == "pods":
            self.replicasets.on_owned(cluster, change)
            self.statefulsets.on_owned(cluster, change)
            self.jobs.on_owned(cluster, change)
            self.scheduler.on_pod(cluster, change)
        elif resource == "replicasets":
            self.replicasets.on_owner(cluster, change)
            self.deployments.on_owned(cluster, change)
        elif resource == "deployments":
            self.deployments.on_owner(cluster, change)
        elif resource == "statefulsets":
            self.statefulsets.on_owner(cluster, change)
        elif resource == "jobs":
            self.jobs.on_owner(cluster, change)
        elif resource == "nodes":
            self.scheduler.on_node(cluster, change)
        elif resource == "persistentvolumeclaims":
            self.volumes.on_claim(cluster, change)
            self.scheduler.retry_pending(cluster)
        elif resource == "persistentvolumes":
            self.volumes.on_volume(cluster, change)
            self.scheduler.retry_pending(cluster)
        if change.type == "DELETED" and resource in OWNERS:
            self.garbage.on_owner_deleted(cluster, change)
