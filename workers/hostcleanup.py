"""What the node agent's unit removes from the host between `kubeadm reset` and `kubeadm join`.

`kubeadm reset` leaves these in place and says so: left there, the node can turn Ready in the
target on the source's CNI (a leftover conflist is picked up before the target's CNI writes its
own), keep the source's service rules, and keep the source's admin credentials on a host that now
belongs elsewhere. Each step logs one line to the unit's journal (`journalctl -u
joinops-join-<id>`) before it runs. docs/migration-steps.md lists them for operators.
"""

from __future__ import annotations

from joinops.ignition.virtual_ip import VIP_MARKER, VIP_UNITS

# (journal line, shell command); run with /bin/sh on the host, root's home being /root. The
# commands are constants: nothing a person typed, no node or cluster name.
STEPS: tuple[tuple[str, str], ...] = (
    (
        # joinops's own VIP layout (joinops/ignition/virtual_ip.py): left running, keepalived
        # keeps bidding for the source's VIP and nginx keeps the API port, forwarding to
        # 127.0.0.1 (the target's API server after the join); kubeadm's control-plane
        # preflight would fail with "Port-6443 is in use".
        f"stopping and disabling keepalived and the local nginx where {VIP_MARKER} says "
        "the joinops virtual-IP layout is on this host",
        f'if [ -e {VIP_MARKER} ]; then echo "joinops: stopping {" ".join(VIP_UNITS)}"; '
        f"systemctl disable --now {' '.join(VIP_UNITS)}; fi",
    ),
    ("removing the CNI configuration /etc/cni/net.d/*", "rm -rf /etc/cni/net.d/*"),
    (
        "flushing the KUBE-* iptables chains (IPv4 and IPv6)",
        "for t in iptables ip6tables; do if command -v $t-save >/dev/null; then "
        "$t-save | grep -v KUBE- | $t-restore; fi; done",
    ),
    (
        "clearing the IPVS tables (when ipvsadm is installed)",
        "if command -v ipvsadm >/dev/null; then ipvsadm --clear; fi",
    ),
    ("removing the root user kubeconfig /root/.kube/config", "rm -f /root/.kube/config"),
    (
        # The bridge plugin keeps `cni0` and its address (from the source's pod CIDR): in the
        # target every new pod would fail with "cni0 already has an IP address different from
        # ..." (flannel-io/flannel#1850). The target's CNI makes its interfaces anew.
        "deleting the CNI network interfaces that are present "
        "(cni0 flannel.1 vxlan.calico kube-ipvs0 cilium_*)",
        "for i in cni0 flannel.1 vxlan.calico kube-ipvs0 "
        "$(ls /sys/class/net | grep ^cilium_); do if [ -e /sys/class/net/$i ]; then "
        'echo "joinops: deleting interface $i"; ip link delete $i; fi; done',
    ),
    ("removing the CNI plugins state /var/lib/cni/", "rm -rf /var/lib/cni/"),
)


def shell() -> str:
    """The steps as one shell group, for inside the unit's single-quoted `sh -c` (so: no
    single quotes in here). Its status is that of its last step (rm -f: success)."""
    parts = [f'echo "joinops: {line}"; {command}' for line, command in STEPS]
    return "{ " + "; ".join(parts) + "; }"
