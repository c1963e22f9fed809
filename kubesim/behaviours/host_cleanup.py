"""What a simulated host keeps across `kubeadm reset`, and what a node agent's unit cleans.

A real `kubeadm reset` leaves the CNI configuration in /etc/cni/net.d, the iptables (and IPVS)
rules of kube-proxy and root's $HOME/.kube/config, and says so. A simulated host starts with
these (`Host.leftovers`); the unit command of a node agent pod removes the ones it has a
command for *between* `kubeadm reset` and `kubeadm join`, and the host records each in
`Host.cleaned` (in order). What stays in `leftovers` after a join is what the node took along.
"""

from __future__ import annotations

import re

from kubesim.hosts import CNI, IPTABLES, IPVS, KUBECONFIG

_COMMANDS = (
    (CNI, re.compile(r"rm -(?:rf|fr|r) /etc/cni/net\.d/\*")),
    (
        IPTABLES,
        re.compile(r"(?:ip6?tables|\$t)-save \| grep -v KUBE- \| (?:ip6?tables|\$t)-restore"),
    ),
    (IPVS, re.compile(r"ipvsadm (?:--clear|-C)")),
    (KUBECONFIG, re.compile(r"rm -f (?:/root|\$HOME|~)/\.kube/config")),
)


def cleanup_between_reset_and_join(text: str) -> list[str]:
    """What the command `text` removes after `kubeadm reset` and before `kubeadm join`."""
    reset, join = text.find("kubeadm reset"), text.find("kubeadm join")
    if reset < 0 or join < reset:
        return []
    between = text[reset:join]
    return [what for what, pattern in _COMMANDS if pattern.search(between)]
