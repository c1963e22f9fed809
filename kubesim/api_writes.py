"""The write verbs of the API: create (also a pod's binding), update, patch, delete and
deletecollection, with the defaults and checks the API server applies."""

from __future__ import annotations

import json
import random
from typing import Any

from kubesim import (
    csr_objects,
    managed_fields,
    node_objects,
    objects,
    pod_objects,
    validation,
    workload_objects,
)
from kubesim.api_request import RequestParsing, int_or_bad
from kubesim.entries import Entry
from kubesim.errors import (
    ApiError,
    bad_request,
    conflict,
    field_required,
    forbidden,
    invalid,
    method_not_allowed,
    not_found,
)
from kubesim.http_messages import Request, Response, json_response, success_status
from kubesim.patch import apply_patch
from kubesim.pod_security import refusal as pod_security_refusal
from kubesim.rbac import Attributes
from kubesim.resources import (
    CSRS,
    DAEMONSETS,
    DEPLOYMENTS,
    JOBS,
    NAMESPACES,
    NODES,
    PDBS,
    PERSISTENTVOLUMES,
    PODS,
    PVCS,
    REPLICASETS,
    SECRETS,
    STATEFULSETS,
    Resource,
)
from kubesim.routes import Route

_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"


class WriteVerbs(RequestParsing):
    def _create(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        if route.subresource == "eviction":
            body = self._object_body(req, res)
            with self.cluster.lock:  # admission (NamespaceLifecycle) runs before the handler
                self._require_active_namespace(route.namespace, res, route.name)
            return self.cluster.evictions.evict(route.namespace, route.name, body)
        if route.subresource == "binding":
            return self._bind(req, route)
        if route.name:
            raise method_not_allowed()
        obj = self._object_body(req, res)
        write = managed_fields.write_of(req, obj)
        with self.cluster.lock:
            entry = self.create_object(res, route, obj, dry_run="dryRun" in req.query, write=write)
        return Response(201, entry.raw())

    def _bind(self, req: Request, route: Route) -> Response:
        from kubesim.controllers.scheduler import bind_pod

        body = self._object_body(req, self._res(route))
        node = (body.get("target") or {}).get("name")
        if not node:
            raise invalid("Binding", route.name, [field_required("target.name")])
        with self.cluster.lock:
            bind_pod(self.cluster, route.namespace, route.name, node)
        return json_response(
            201,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": 201,
            },
        )

    def create_object(
        self,
        res: Resource,
        route: Route,
        obj: dict[str, Any],
        dry_run: bool = False,
        write: managed_fields.Write | None = None,
    ) -> Entry:
        self._check_namespace(route, obj)
        meta = obj["metadata"]
        for key in (
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ):
            meta.pop(key, None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices(_GENERATE_CHARS, k=5))
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        self._defaults(res, obj)
        validation.validate(res, obj)
        if res.namespaced:
            self._require_active_namespace(route.namespace, res, meta["name"])
        if res is PODS:
            self._admit_pod_security(route.namespace, obj)
        if write is not None:
            managed_fields.record(obj, None, write, res.api_version, self.cluster.now())
        store = self.cluster.store
        if dry_run:
            if store.get(res, route.namespace, meta["name"]) is not None:
                from kubesim.errors import already_exists

                raise already_exists(res.name, meta["name"], res.group)
            return Entry(obj)
        return store.create(res, obj)

    def _defaults(self, res: Resource, obj: dict[str, Any]) -> None:
        now = self.cluster.now()
        if res is PODS:
            pod_objects.default_pod(obj)
            if obj["spec"].get("nodeName"):
                pod_objects.set_pod_scheduled(obj, now)
        elif res is NODES:
            node_objects.default_node(obj, now)
        elif res is NAMESPACES:
            objects.default_namespace(obj)
        elif res is PDBS:
            workload_objects.default_pdb(obj)
            obj["status"].pop("observedGeneration", None)
        elif res is SECRETS:
            objects.default_secret(obj)
        elif res is DAEMONSETS:
            workload_objects.default_daemonset(obj)
        elif res is REPLICASETS:
            workload_objects.default_replicaset(obj)
        elif res is DEPLOYMENTS:
            workload_objects.default_deployment(obj)
        elif res is STATEFULSETS:
            workload_objects.default_statefulset(obj)
        elif res is JOBS:
            workload_objects.default_job(obj)
        elif res is PERSISTENTVOLUMES:
            workload_objects.default_persistent_volume(obj)
        elif res is PVCS:
            workload_objects.default_claim(obj)
        elif res is CSRS:
            csr_objects.default_csr(obj, self.cluster.rbac.user)

    def _require_active_namespace(self, namespace: str, res: Resource, name: str) -> None:
        ns = self.cluster.store.get(NAMESPACES, "", namespace)
        if ns is None:
            raise not_found("namespaces", namespace)
        if ns.obj.get("status", {}).get("phase") == "Terminating":
            raise ApiError(
                403,
                f'{res.name} "{name}" is forbidden: unable to create new content in namespace '
                f"{namespace} because it is being terminated",
                details={
                    "name": name,
                    "kind": res.name,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {namespace} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    def _admit_pod_security(self, namespace: str, pod: dict[str, Any]) -> None:
        """PodSecurity admission (kubesim.pod_security): the namespace's enforce label."""
        ns = self.cluster.store.get(NAMESPACES, "", namespace)
        labels = (ns.meta.get("labels") or {}) if ns is not None else {}
        why = pod_security_refusal(labels, pod)
        if why is not None:
            raise forbidden("pods", pod["metadata"]["name"], "", why)

    def _update(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        obj = self._object_body(req, res)
        if obj["metadata"].get("name") not in (None, route.name):
            raise bad_request(
                f"the name of the object ({obj['metadata']['name']}) does not match the name on "
                f"the URL ({route.name})"
            )
        obj["metadata"]["name"] = route.name
        self._check_namespace(route, obj)
        with self.cluster.lock:
            current = self.cluster.store.require(res, route.namespace, route.name)
            write = managed_fields.write_of(req, obj, route.subresource or "")
            entry = self.replace_object(res, route, current, obj, write)
        return Response(200, entry.raw())

    def replace_object(
        self,
        res: Resource,
        route: Route,
        current: Entry,
        obj: dict[str, Any],
        write: managed_fields.Write | None = None,
    ) -> Entry:
        """Store ``obj`` over ``current`` with the server's update rules; ``write`` (a client's
        request) updates its field manager's managedFields entry."""
        meta, old_meta = obj["metadata"], current.meta
        wanted_rv = meta.get("resourceVersion")
        if wanted_rv and wanted_rv != old_meta["resourceVersion"]:
            raise conflict(res.name, route.name, res.group)
        if res is CSRS:
            obj = self._csr_update(route, current, obj)
        elif route.subresource == "status":
            new = current.copy()
            new["status"] = obj.get("status", new.get("status"))
            obj = new
        else:
            if res.has_status:
                obj["status"] = current.copy().get("status", {})
            for key in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "namespace",
            ):
                if key in old_meta:
                    meta[key] = old_meta[key]
                else:
                    meta.pop(key, None)
            meta["generation"] = old_meta.get("generation", 1)
            if res.has_spec_generation and obj.get("spec") != current.obj.get("spec"):
                meta["generation"] += 1
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        if old_meta.get("managedFields") and "managedFields" not in obj["metadata"]:
            obj["metadata"]["managedFields"] = old_meta["managedFields"]  # a PUT leaving them out
        if write is not None:
            kept = obj["metadata"].get("managedFields")
            managed_fields.record(obj, kept, write, res.api_version, self.cluster.now())
        if res is SECRETS:
            objects.default_secret(obj)
        validation.validate(res, obj, creating=False)
        return self.cluster.store.put(res, obj)

    def _csr_update(self, route: Route, current: Entry, obj: dict[str, Any]) -> dict[str, Any]:
        """The approval subresource needs `approve` on the CSR's signer besides the update
        (plugin/pkg/admission/certificates/approval: the signer name, or its `domain/*`)."""
        old = current.copy()
        if route.subresource == "approval":
            signer = old["spec"].get("signerName", "")
            names = (signer, signer.split("/")[0] + "/*")
            rbac = self.cluster.rbac
            if not any(
                rbac.allowed(Attributes("approve", CSRS.group, "signers", name=n)) for n in names
            ):
                raise forbidden(
                    "certificatesigningrequests",
                    route.name,
                    CSRS.group,
                    f'user not permitted to approve requests with signerName "{signer}"',
                )
            return csr_objects.approval_update(old, obj, self.cluster.now())
        if route.subresource == "status":
            return csr_objects.status_update(old, obj)
        return csr_objects.plain_update(old, obj)

    def _patch(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        content_type = req.headers.get("content-type", "").split(";")[0].strip()
        patch = self._body(req)
        with self.cluster.lock:
            current = self.cluster.store.require(res, route.namespace, route.name)
            doc = current.copy()
            patched = apply_patch(content_type, doc, patch)
            patched.setdefault("metadata", {})
            if patched["metadata"].get("name") != route.name:
                raise bad_request(
                    "metadata.name: Invalid value: the name cannot be changed by a patch"
                )
            if not _patch_pins_rv(patch):
                patched["metadata"]["resourceVersion"] = current.meta["resourceVersion"]
            write = managed_fields.write_of(req, patch, route.subresource or "")
            entry = self.replace_object(res, route, current, patched, write)
        return Response(200, entry.raw())

    def _delete(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        options = self._body(req) or {}
        if not isinstance(options, dict):
            raise bad_request("DeleteOptions must be an object")
        grace = options.get("gracePeriodSeconds")
        if grace is None and "gracePeriodSeconds" in req.query:
            grace = int_or_bad(req.query["gracePeriodSeconds"], "gracePeriodSeconds")
        with self.cluster.lock:
            current = self.cluster.store.require(res, route.namespace, route.name)
            _check_preconditions(res, route.name, current, options.get("preconditions") or {})
            if res is PODS:
                entry = self.cluster.delete_pod(route.namespace, route.name, grace)
                return Response(200, entry.raw())
            if res is NAMESPACES:
                entry = self.cluster.delete_namespace(route.name)
                return Response(200, entry.raw())
            gone = self.cluster.store.remove(res, route.namespace, route.name)
        return json_response(200, success_status(res, route.name, gone.meta.get("uid", "")))

    def _deletecollection(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        labels, fields = self._selectors(req, res)
        options = self._body(req) or {}
        grace = options.get("gracePeriodSeconds") if isinstance(options, dict) else None
        with self.cluster.lock:
            entries = self.cluster.store.list(res, route.namespace or None, labels, fields)
            for entry in entries:
                ns, name = entry.meta.get("namespace", ""), entry.meta["name"]
                if res is PODS:
                    self.cluster.delete_pod(ns, name, grace)
                elif res is NAMESPACES:
                    self.cluster.delete_namespace(name)
                else:
                    self.cluster.store.remove(res, ns, name)
            rv = self.cluster.store.rv
        head = {
            "kind": res.list_kind,
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(rv)},
        }
        body = json.dumps(head, separators=(",", ":")).encode()[:-1]
        return Response(200, body + b',"items":[' + b",".join(e.raw() for e in entries) + b"]}")


def _patch_pins_rv(patch: Any) -> bool:
    if isinstance(patch, dict):
        return bool((patch.get("metadata") or {}).get("resourceVersion"))
    if isinstance(patch, list):
        return any(
            op.get("path") == "/metadata/resourceVersion"
            for op in patch
            if isinstance(op, dict) and op.get("op") in ("add", "replace")
        )
    return False


def _check_preconditions(res: Resource, name: str, current: Entry, pre: dict[str, Any]) -> None:
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    what = f"{res.name}.{res.group}" if res.group else res.name
    if uid and uid != current.meta.get("uid"):
        raise ApiError(
            409,
            f'Operation cannot be fulfilled on {what} "{name}": Precondition '
            f"failed: UID in precondition: {uid}, UID in object meta: "
            f"{current.meta.get('uid')}",
            reason="Conflict",
            details={"name": name, "kind": res.name},
        )
    if rv and rv != current.meta.get("resourceVersion"):
        raise ApiError(
            409,
            f'Operation cannot be fulfilled on {what} "{name}": the '
            f"ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({current.meta.get('resourceVersion')}). "
            "The object might have been modified",
            reason="Conflict",
            details={"name": name, "kind": res.name},
        )
