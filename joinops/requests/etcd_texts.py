"""What a migration says in its thread about etcd's member lists (workers.etcdcleanup,
workers.completion): the source's member after the reset, the target's after the join."""

from __future__ import annotations


def member_removed_after_reset(node: str, source: str, member: str, hex_id: str) -> str:
    return (
        f"`kubeadm reset` on `{node}` left its etcd member {member} in {source}'s member list "
        f"(it removes it only when the node's admin.conf can still read kubeadm-config): "
        f"joinops removed it (`etcdctl member remove {hex_id}`), so {source} counts no dead "
        f"member."
    )


def member_removal_failed(node: str, source: str, member: str, why: str, command: str) -> str:
    return (
        f"`kubeadm reset` on `{node}` left its etcd member {member} in {source}'s member list, "
        f"and joinops could not remove it ({why}). Until it is removed {source}'s etcd counts a "
        f"dead member, and joinops moves no other control plane out of {source}: on a healthy "
        f"control plane of {source} run `{command}`."
    )


def member_unconfirmed(node: str, source: str, why: str) -> str:
    return (
        f"Could not confirm that `{node}`'s etcd member left {source}'s member list ({why}). "
        f"The next control-plane move out of {source} reads the list again and names any "
        f"member left behind."
    )


def member_not_voting(node: str) -> str:
    return f"`{node}` as a started, voting member of etcd's member list"


def member_list_unread(what: str) -> str:
    return f"etcd's member list, which could not be read ({what})"
