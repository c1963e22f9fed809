"""deploy/managed-cluster-rbac.yaml allows every API call joinops makes, and grants nothing more."""

from __future__ import annotations

import pytest
from deploy_rbac import (
    AGENT_NAMESPACE,
    CHART_RULES,
    MANIFEST,
    SUBJECT,
    Call,
    Policy,
    allows,
    grants,
    load_calls,
    load_documents,
    needed_grants,
    policy_from_chart_rules,
    policy_from_manifest,
    wildcards,
)


@pytest.fixture(scope="module")
def policy() -> Policy:
    return policy_from_manifest(load_documents(MANIFEST))


@pytest.fixture(scope="module")
def calls() -> list[Call]:
    return load_calls()


def test_every_call_is_allowed(policy: Policy, calls: list[Call]) -> None:
    denied = [str(c) for c in calls if not allows(policy, c)]
    assert denied == []


def test_nothing_more_is_granted(policy: Policy, calls: list[Call]) -> None:
    granted, needed = grants(policy), needed_grants(calls)
    assert sorted(map(str, granted - needed)) == [], "granted, but no call needs it"
    assert sorted(map(str, needed - granted)) == [], "needed, but granted more broadly or not"


def test_no_wildcards_and_every_role_bound_to_the_service_account_only(policy: Policy) -> None:
    assert wildcards(policy) == []
    assert policy.unbound == []
    assert policy.other_subjects == []


def test_the_manifest_creates_what_the_kubeconfig_script_reads() -> None:
    docs = {(d["kind"], d["metadata"]["name"]): d for d in load_documents(MANIFEST)}
    namespace, name = SUBJECT
    labels = docs[("Namespace", namespace)]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert docs[("ServiceAccount", name)]["metadata"]["namespace"] == namespace
    token = docs[("Secret", "joinops-token")]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"]["kubernetes.io/service-account.name"] == name
    assert namespace == AGENT_NAMESPACE


def test_the_charts_rules_are_the_manifests(policy: Policy) -> None:
    chart = policy_from_chart_rules(CHART_RULES)
    assert chart.cluster_rules == policy.cluster_rules
    assert chart.namespace_rules == policy.namespace_rules


def test_names_known_in_advance_are_enforced(policy: Policy) -> None:
    """The evaluator honours resourceNames: a neighbouring object stays out of reach."""
    assert allows(policy, Call("get", "", "configmaps", "kube-system", "kubeadm-config"))
    assert not allows(policy, Call("get", "", "configmaps", "kube-system", "kube-proxy"))
    # A name not known in advance never matches resourceNames.
    assert not allows(policy, Call("get", "", "configmaps", "kube-system"))
    assert not allows(policy, Call("list", "", "configmaps", "kube-public", "cluster-info"))
    assert not allows(policy, Call("get", "", "secrets", "kube-system", "bootstrap-token-abcdef"))
    assert not allows(policy, Call("create", "", "secrets", "default"))
    assert not allows(policy, Call("create", "", "pods", "default"))
    assert allows(policy, Call("create", "", "pods/eviction", "default", "web-1"))
    assert not allows(policy, Call("create", "", "pods/exec", AGENT_NAMESPACE))
    assert allows(policy, Call("get", url="/version"))
    assert not allows(policy, Call("get", url="/metrics"))


def test_the_rules_fit_the_simulator(policy: Policy) -> None:
    rules, per_namespace = policy.simulator_rules()
    assert all("nonResourceURLs" not in r and r["resources"] for r in rules)
    assert set(per_namespace) == {"kube-system", "kube-public", AGENT_NAMESPACE}
