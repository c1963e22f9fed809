"""What a simulated host keeps across `kubeadm reset`, and what a node agent's unit cleans.

A real `kubeadm reset` leaves the CNI configuration in /etc/cni/net.d, the iptables (and IPVS)
rules of kube-proxy and root's $HOME/.kube/config, and says so. A simulated host starts with
these (`Host.leftovers`); the unit command of a node agent pod removes the ones it has a
command for *between* `kubeadm reset` and `kubeadm join`, and the host records each in
`Host.cleaned` (in order). What stays in `leftovers` after a join is what the node took along.
"""

from __future__ import annotations

import re

from kubesim.hosts import CNI, CNI_INTERFACES, CNI_STATE, IPTABLES, IPVS, KUBECONFIG, VIP_MARKER

_COMMANDS = (
    (CNI, re.compile(r"rm -(?:rf|fr|r) /etc/cni/net\.d/\*")),
    (
        IPTABLES,
        re.compile(r"(?:ip6?tables|\$t)-save \| grep -v KUBE- \| (?:ip6?tables|\$t)-restore"),
    ),
    (IPVS, re.compile(r"ipvsadm (?:--clear|-C)")),
    (KUBECONFIG, re.compile(r"rm -f (?:/root|\$HOME|~)/\.kube/config")),
    (CNI_STATE, re.compile(r"rm -(?:rf|fr|r) /var/lib/cni/?(?:\s|;|$)")),
)
# `if [ -e MARKER ]; then ... systemctl disable --now UNITS...; fi`: only where the marker is
_UNITS_STOPPED = re.compile(
    r"if \[ -e "
    + re.escape(VIP_MARKER)
    + r' \]; then (?:echo "[^"]*"; )?systemctl disable --now ([^;]+);'
)
# `for i in NAMES...; do ... ip link delete $i ...; done`, names or `cilium_` found in /sys
_INTERFACE_LOOP = re.compile(r"for (\w+) in ([^;]*); do .*?ip link del(?:ete)? \$\1")


def cleanup_between_reset_and_join(text: str) -> list[str]:
    """What the command `text` removes after `kubeadm reset` and before `kubeadm join`."""
    reset, join = text.find("kubeadm reset"), text.find("kubeadm join")
    if reset < 0 or join < reset:
        return []
    between = text[reset:join]
    return [what for what, pattern in _COMMANDS if pattern.search(between)]


def interfaces_deleted(text: str, present: list[str]) -> list[str]:
    """Which of the host's `present` interfaces the unit deletes between reset and join."""
    reset, join = text.find("kubeadm reset"), text.find("kubeadm join")
    if reset < 0 or join < reset:
        return []
    match = _INTERFACE_LOOP.search(text[reset:join])
    if match is None:
        return []
    words = match.group(2).split()
    named = {w for w in words if w in CNI_INTERFACES or not w.startswith("$")}
    cilium = "grep ^cilium_" in match.group(2)
    return [i for i in present if i in named or (cilium and i.startswith("cilium_"))]


def units_stopped(text: str, files: set[str], units: dict[str, str]) -> list[str]:
    """Which of the host's running `units` the unit stops and disables between reset and join
    (`systemctl disable --now`, only on a host with joinops's virtual-IP marker file)."""
    reset, join = text.find("kubeadm reset"), text.find("kubeadm join")
    if reset < 0 or join < reset or VIP_MARKER not in files:
        return []
    match = _UNITS_STOPPED.search(text[reset:join])
    if match is None:
        return []
    named = match.group(1).split()
    return [u for u, state in units.items() if u in named and state != "disabled"]
