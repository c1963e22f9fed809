"""After a control plane's reset: is its etcd member gone from the source's member list?

`kubeadm reset` removes the member only when the node's admin.conf can read kubeadm-config
(cmd/kubeadm/app/cmd/phases/reset/removeetcdmember.go); otherwise it warns, wipes the member's
data and leaves it in the list, dead. Once the node has joined the target (the clean-up step:
the reset is long done), the source's list is read on one of its Ready control planes; a member
still there (its peer URL's host is the node's old InternalIP, or its name is the node's) is
removed by its ID, and the thread says so. Never fails the move: the node is in the target; a
removal that fails says what to run, and the rules refuse the next control-plane move out of the
source while the dead member is there.
"""

from __future__ import annotations

from joinops.clusters import etcdmembers
from joinops.clusters.etcdmembers import EtcdMember, EtcdPod, MembersUnreadable
from joinops.errors import ClusterError, ClusterNotFound
from joinops.requests import etcd_texts
from joinops.rules import etcdguard
from joinops.rules import texts as rule_texts
from workers.run import Run


def remember_old_address(run: Run) -> None:
    """The node's InternalIP in the source (its etcd peer URL's host), before its Node goes."""
    if run.memory("cleanup").get("old_ip") is not None:
        return
    try:
        node = run.source.get_node(run.request.node)
    except ClusterNotFound:
        node = None
    run.remember("cleanup", old_ip=node.internal_ip if node is not None else "")


def member_left_behind(run: Run) -> str:
    """The line for the thread ("" when the member was gone, as it should be)."""
    request = run.request
    pod = EtcdPod(run.namespace, run.ctx.settings.agent.image)
    try:
        control_planes = run.source.control_planes()
        pods = run.source.control_plane_pods()
        if not etcdguard.stacked(pods, control_planes):
            return ""
        reader = etcdguard.reader(pods, control_planes, request.node)
        if reader is None:
            raise MembersUnreadable(rule_texts.etcd_no_reader(request.source))
        members = etcdmembers.read(run.source, reader, pod, run.ctx.clock)
    except (ClusterError, MembersUnreadable) as e:
        why = e.what if isinstance(e, MembersUnreadable) else e.detail
        return etcd_texts.member_unconfirmed(request.node, request.source, why)
    member = _the_node_member(run, members)
    if member is None:
        return ""
    try:
        etcdmembers.remove(run.source, reader, member, pod, run.ctx.clock)
    except MembersUnreadable as e:
        command = etcdmembers.remove_command(member)
        return etcd_texts.member_removal_failed(
            request.node, request.source, member.label(), e.what, command
        )
    return etcd_texts.member_removed_after_reset(
        request.node, request.source, member.label(), member.hex_id
    )


def _the_node_member(run: Run, members: list[EtcdMember]) -> EtcdMember | None:
    old_ip = str(run.memory("cleanup").get("old_ip") or "")
    for member in members:
        if member.name == run.request.node or (old_ip and old_ip in member.peer_hosts):
            return member
    return None
