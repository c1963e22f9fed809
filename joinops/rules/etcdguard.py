"""The etcd quorum guard by etcd's own members, not by Node objects.

`kubeadm reset` removes the node's member only when the node's admin.conf can read kubeadm-config
(cmd/kubeadm/app/cmd/phases/reset/removeetcdmember.go); otherwise it warns, wipes the data
directory anyway, and the member stays in the list, dead. joinops then deletes the Node, so a
guard counting Nodes sees a healthy cluster that etcd counts as one member down: the next move
loses quorum. So before a control plane leaves a stacked-etcd source with other control planes,
its member list is read (joinops.clusters.etcdmembers) and every member other than the leaving
node's own must be backed by a Ready control plane (its peer URL's host is the node's
InternalIP, or its name is the node's name), started, healthy and voting. A list that cannot be
read is a refusal too: never allowed by default.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from joinops.clusters import etcdmembers
from joinops.clusters.etcdmembers import EtcdMember, EtcdPod, MembersUnreadable
from joinops.clusters.kube import KubeCluster
from joinops.requests.model import NodeFacts
from joinops.rules import texts as rule_texts
from joinops.rules.quorum import mirror_pod_name


def stacked(pods: dict[str, bool], control_planes: Sequence[NodeFacts]) -> bool:
    """Does the cluster run etcd as kubeadm's static pods on its control planes?"""
    return any(mirror_pod_name("etcd", cp.name) in pods for cp in control_planes)


def reader(pods: dict[str, bool], control_planes: Sequence[NodeFacts], leaving: str) -> str | None:
    """A Ready control plane, other than `leaving`, whose etcd mirror pod is Ready."""
    for cp in control_planes:
        if cp.name != leaving and cp.ready and pods.get(mirror_pod_name("etcd", cp.name)):
            return cp.name
    return None


def backer(member: EtcdMember, control_planes: Sequence[NodeFacts]) -> NodeFacts | None:
    """The control-plane Node a member runs on: peer URL host = InternalIP, or same name."""
    for cp in control_planes:
        if (cp.internal_ip and cp.internal_ip in member.peer_hosts) or (
            member.name and member.name == cp.name
        ):
            return cp
    return None


def member_problems(
    members: list[EtcdMember], control_planes: Sequence[NodeFacts], leaving: str
) -> list[str]:
    """Each member, besides the leaving node's own, that no Ready control plane backs or that
    is not a started, healthy, voting member; in words, with the fix where there is one."""
    problems = []
    for member in members:
        node = backer(member, control_planes)
        if node is not None and node.name == leaving:
            continue
        if node is None:
            problems.append(
                rule_texts.etcd_member_without_node(
                    member.label(), etcdmembers.remove_command(member)
                )
            )
        elif not node.ready:
            problems.append(rule_texts.etcd_member_node_not_ready(member.label(), node.name))
        elif not member.started:
            problems.append(rule_texts.etcd_member_not_started(member.label()))
        elif not member.healthy:
            problems.append(rule_texts.etcd_member_unhealthy(member.label()))
        elif member.learner:
            problems.append(rule_texts.etcd_member_learner(member.label()))
    return problems


def check(
    source: KubeCluster,
    leaving: str,
    control_planes: Sequence[NodeFacts],
    pods: dict[str, bool],
    pod: EtcdPod,
    clock: Callable[[], float] = time.time,
) -> tuple[str, list[str]]:
    """('', problems) from the source's member list; (what could not be read, []) when it
    could not be had. Nothing to read (external etcd, no peer): ('', [])."""
    if not stacked(pods, control_planes) or not any(cp.name != leaving for cp in control_planes):
        return "", []
    node = reader(pods, control_planes, leaving)
    if node is None:
        return rule_texts.etcd_no_reader(source.name), []
    try:
        members = etcdmembers.read(source, node, pod, clock)
    except MembersUnreadable as e:
        return e.what, []
    return "", member_problems(members, control_planes, leaving)
