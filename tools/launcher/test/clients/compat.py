"""The official Python client (Debian's python3-kubernetes) against orch.

Usage: /usr/bin/python3 compat.py KUBECONFIG CASE. Each case asserts in Python and, on success, prints one
JSON line with what it saw; a failed assertion or an ApiException exits non-zero with the reason on stderr.
"""

import base64
import json
import sys
import threading
import time
import uuid

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

NS = "default"


def status_of(fn):
    try:
        fn()
    except ApiException as e:
        return e.status
    return 200


def raw(method, path, body=None, content_type="application/json", query=None):
    """A request the typed API cannot send (merge and apply patches, newer query parameters)."""
    api = client.ApiClient()
    data = api.call_api(
        path,
        method,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        _preload_content=False,
    )[0]
    return json.loads(data.data)


def crud():
    core, apps = client.CoreV1Api(), client.AppsV1Api()
    name = "py-crud"
    cm = core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"suite": "py"}), data={"a": "1"})
    )
    assert cm.metadata.resource_version and cm.metadata.uid, cm.metadata
    assert status_of(lambda: core.create_namespaced_config_map(NS, {"metadata": {"name": name}})) == 409
    got = core.read_namespaced_config_map(name, NS)
    assert got.data == {"a": "1"}, got.data
    listed = core.list_namespaced_config_map(NS, label_selector="suite=py")
    assert [i.metadata.name for i in listed.items] == [name], listed.items
    assert listed.metadata.resource_version
    got.data["b"] = "2"
    replaced = core.replace_namespaced_config_map(name, NS, got)
    assert replaced.data == {"a": "1", "b": "2"}
    # A stale resourceVersion is a conflict.
    assert status_of(lambda: core.replace_namespaced_config_map(name, NS, got)) == 409
    core.delete_namespaced_config_map(name, NS, body=client.V1DeleteOptions(propagation_policy="Background"))
    assert status_of(lambda: core.read_namespaced_config_map(name, NS)) == 404
    # A dry run answers with the object and stores nothing.
    dry = core.create_namespaced_config_map(NS, {"metadata": {"name": "py-dry"}}, dry_run="All")
    assert dry.metadata.name == "py-dry" and status_of(lambda: core.read_namespaced_config_map("py-dry", NS)) == 404
    # Pages of a list, as the client follows `continue`.
    for i in range(5):
        core.create_namespaced_config_map(NS, {"metadata": {"name": f"py-page-{i}", "labels": {"suite": "py-page"}}})
    page = core.list_namespaced_config_map(NS, label_selector="suite=py-page", limit=2)
    names = [i.metadata.name for i in page.items]
    while page.metadata._continue:
        page = core.list_namespaced_config_map(NS, label_selector="suite=py-page", limit=2, _continue=page.metadata._continue)
        names += [i.metadata.name for i in page.items]
    assert names == [f"py-page-{i}" for i in range(5)], names
    core.delete_collection_namespaced_config_map(NS, label_selector="suite=py-page")
    assert core.list_namespaced_config_map(NS, label_selector="suite=py-page").items == []

    secret = core.create_namespaced_secret(
        NS, client.V1Secret(metadata=client.V1ObjectMeta(name="py-secret"), string_data={"password": "s3cret"})
    )
    assert secret.string_data is None, secret.string_data
    assert base64.b64decode(secret.data["password"]) == b"s3cret", secret.data
    assert secret.type == "Opaque"
    core.delete_namespaced_secret("py-secret", NS)

    dep = apps.create_namespaced_deployment(
        NS,
        client.V1Deployment(
            metadata=client.V1ObjectMeta(name="py-web"),
            spec=client.V1DeploymentSpec(
                replicas=2,
                selector=client.V1LabelSelector(match_labels={"app": "py-web"}),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"app": "py-web"}),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="nginx:1.27")]),
                ),
            ),
        ),
    )
    assert dep.spec.strategy.type == "RollingUpdate", dep.spec.strategy
    scale = apps.read_namespaced_deployment_scale("py-web", NS)
    assert scale.spec.replicas == 2
    apps.patch_namespaced_deployment_scale("py-web", NS, {"spec": {"replicas": 3}})
    assert apps.read_namespaced_deployment("py-web", NS).spec.replicas == 3
    apps.delete_namespaced_deployment("py-web", NS, propagation_policy="Foreground")

    svc = core.create_namespaced_service(
        NS,
        client.V1Service(
            metadata=client.V1ObjectMeta(name="py-svc"),
            spec=client.V1ServiceSpec(selector={"app": "py-web"}, ports=[client.V1ServicePort(port=80)]),
        ),
    )
    assert svc.spec.cluster_ip and svc.spec.type == "ClusterIP", svc.spec
    core.delete_namespaced_service("py-svc", NS)
    return {"ok": True}


def patches():
    core, apps = client.CoreV1Api(), client.AppsV1Api()
    name = "py-patch"
    core.create_namespaced_config_map(NS, {"metadata": {"name": name}, "data": {"a": "1", "b": "2"}})
    # A list body is a JSON patch.
    cm = core.patch_namespaced_config_map(name, NS, [{"op": "replace", "path": "/data/a", "value": "10"}])
    assert cm.data == {"a": "10", "b": "2"}, cm.data
    # A failing JSON patch test is 422.
    assert status_of(lambda: core.patch_namespaced_config_map(name, NS, [{"op": "test", "path": "/data/a", "value": "x"}])) == 422
    # A dict body is a strategic merge patch.
    cm = core.patch_namespaced_config_map(name, NS, {"data": {"b": None, "c": "3"}})
    assert cm.data == {"a": "10", "c": "3"}, cm.data
    # A merge patch, sent raw (this client version has no way to choose it).
    cm = raw("PATCH", f"/api/v1/namespaces/{NS}/configmaps/{name}", {"data": {"c": None, "d": "4"}}, "application/merge-patch+json")
    assert cm["data"] == {"a": "10", "d": "4"}, cm

    # Strategic merge on a Deployment merges containers by name.
    apps.create_namespaced_deployment(
        NS,
        {
            "metadata": {"name": "py-smp"},
            "spec": {
                "selector": {"matchLabels": {"app": "py-smp"}},
                "template": {
                    "metadata": {"labels": {"app": "py-smp"}},
                    "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
                },
            },
        },
    )
    dep = apps.patch_namespaced_deployment(
        "py-smp", NS, {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}}}
    )
    images = [(c.name, c.image) for c in dep.spec.template.spec.containers]
    assert images == [("a", "a:1"), ("b", "b:2")], images
    apps.delete_namespaced_deployment("py-smp", NS)

    # Server-side apply: two managers, a conflict, then force.
    path = f"/api/v1/namespaces/{NS}/configmaps/py-applied"
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-applied"}, "data": {"k": "one"}})
    cm = raw("PATCH", path, body, "application/apply-patch+yaml", [("fieldManager", "py-one")])
    assert cm["data"] == {"k": "one"}, cm
    other = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-applied"}, "data": {"k": "two"}})
    try:
        raw("PATCH", path, other, "application/apply-patch+yaml", [("fieldManager", "py-two")])
        raise AssertionError("a conflicting apply succeeded")
    except ApiException as e:
        assert e.status == 409, e
        status = json.loads(e.body)
        assert status["reason"] == "Conflict", status
        assert any(c.get("field") == ".data.k" for c in status["details"]["causes"]), status
    cm = raw("PATCH", path, other, "application/apply-patch+yaml", [("fieldManager", "py-two"), ("force", "True")])
    assert cm["data"] == {"k": "two"}, cm
    managers = {m["manager"]: m for m in cm["metadata"]["managedFields"]}
    assert "f:k" in json.dumps(managers["py-two"]["fieldsV1"]), managers
    assert "py-one" not in managers or "f:k" not in json.dumps(managers["py-one"].get("fieldsV1", {})), managers
    core.delete_namespaced_config_map("py-applied", NS)
    core.delete_namespaced_config_map(name, NS)
    return {"ok": True}


def watches():
    core = client.CoreV1Api()
    name = "py-watched"
    start = core.list_namespaced_config_map(NS).metadata.resource_version

    def changes():
        time.sleep(0.3)
        core.create_namespaced_config_map(NS, {"metadata": {"name": name}, "data": {"n": "0"}})
        core.patch_namespaced_config_map(name, NS, {"data": {"n": "1"}})
        core.delete_namespaced_config_map(name, NS)

    threading.Thread(target=changes).start()
    seen = []
    w = watch.Watch()
    for event in w.stream(
        core.list_namespaced_config_map,
        NS,
        resource_version=start,
        allow_watch_bookmarks=True,
        field_selector=f"metadata.name={name}",
        timeout_seconds=10,
    ):
        seen.append((event["type"], event["object"].data))
        if event["type"] == "DELETED":
            w.stop()
    assert seen == [("ADDED", {"n": "0"}), ("MODIFIED", {"n": "1"}), ("DELETED", {"n": "1"})], seen

    # From the start resourceVersion again: the same history, replayed.
    replay, w = [], watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=start,
                          field_selector=f"metadata.name={name}", timeout_seconds=5):
        replay.append(event["type"])
        if event["type"] == "DELETED":
            w.stop()
    assert replay == ["ADDED", "MODIFIED", "DELETED"], replay

    # Bookmarks: with sendInitialEvents the stream marks the end of the initial state with a bookmark.
    core.create_namespaced_config_map(NS, {"metadata": {"name": "py-bookmarked"}})
    api = client.ApiClient()
    resp = api.call_api(
        f"/api/v1/namespaces/{NS}/configmaps", "GET",
        query_params=[("watch", "True"), ("allowWatchBookmarks", "True"), ("sendInitialEvents", "True"),
                      ("resourceVersionMatch", "NotOlderThan"), ("timeoutSeconds", "1")],
        header_params={"Accept": "application/json"}, auth_settings=["BearerToken"], _preload_content=False,
    )[0]
    events = [json.loads(line) for line in resp.data.decode().splitlines() if line]
    types = [e["type"] for e in events]
    assert "BOOKMARK" in types, types
    bookmark = next(e for e in events if e["type"] == "BOOKMARK")
    assert bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true", bookmark
    added = [e["object"]["metadata"]["name"] for e in events[: types.index("BOOKMARK")]]
    assert "py-bookmarked" in added, added
    core.delete_namespaced_config_map("py-bookmarked", NS)
    return {"ok": True, "bookmarkResourceVersion": bookmark["object"]["metadata"]["resourceVersion"]}


def token_request():
    core = client.CoreV1Api()
    core.create_namespaced_service_account(NS, {"metadata": {"name": "py-robot"}})
    tr = core.create_namespaced_service_account_token(
        "py-robot", NS, client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=["py-audience"], expiration_seconds=3600))
    )
    token = tr.status.token
    assert token.count(".") == 2, token
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["aud"] == ["py-audience"], claims
    assert claims["sub"] == f"system:serviceaccount:{NS}:py-robot", claims
    # The token authenticates (the default audience is the API server's).
    default = core.create_namespaced_service_account_token(
        "py-robot", NS, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[]))
    ).status.token
    review = client.AuthenticationV1Api().create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=default))
    )
    assert review.status.authenticated, review.status
    assert review.status.user.username == f"system:serviceaccount:{NS}:py-robot", review.status.user
    return {"ok": True}


def custom_resources():
    ext, custom = client.ApiextensionsV1Api(), client.CustomObjectsApi()
    group, plural = "stable.example.com", "pycrontabs"
    ext.create_custom_resource_definition({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": "pycrontab", "kind": "PyCronTab"},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                }}},
            }],
        },
    })
    deadline = time.time() + 10
    while True:
        crd = ext.read_custom_resource_definition(f"{plural}.{group}")
        conditions = {c.type: c.status for c in (crd.status.conditions or [])}
        if conditions.get("Established") == "True":
            break
        assert time.time() < deadline, conditions
        time.sleep(0.1)
    while True:  # discovery may lag Established by a moment
        code = status_of(lambda: custom.list_namespaced_custom_object(group, "v1", NS, plural))
        if code == 200:
            break
        assert time.time() < deadline, code
        time.sleep(0.1)
    obj = custom.create_namespaced_custom_object(group, "v1", NS, plural, {
        "apiVersion": f"{group}/v1", "kind": "PyCronTab", "metadata": {"name": "one"}, "spec": {"cronSpec": "* * * * */5"},
    })
    assert obj["spec"] == {"cronSpec": "* * * * */5", "replicas": 1}, obj
    assert status_of(lambda: custom.create_namespaced_custom_object(group, "v1", NS, plural, {
        "apiVersion": f"{group}/v1", "kind": "PyCronTab", "metadata": {"name": "bad"}, "spec": {"replicas": "many"},
    })) == 422
    listed = custom.list_namespaced_custom_object(group, "v1", NS, plural)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["one"], listed
    # CustomObjectsApi patches with a merge patch.
    obj = custom.patch_namespaced_custom_object(group, "v1", NS, plural, "one", {"spec": {"replicas": 3}})
    assert obj["spec"]["replicas"] == 3, obj
    obj = custom.patch_namespaced_custom_object_status(group, "v1", NS, plural, "one", {"status": {"phase": "Ready"}})
    assert obj["status"] == {"phase": "Ready"}, obj
    # The main endpoint leaves status alone.
    obj["status"] = {"phase": "Ignored"}
    obj = custom.replace_namespaced_custom_object(group, "v1", NS, plural, "one", obj)
    assert obj["status"] == {"phase": "Ready"}, obj
    custom.delete_namespaced_custom_object(group, "v1", NS, plural, "one")
    assert status_of(lambda: custom.get_namespaced_custom_object(group, "v1", NS, plural, "one")) == 404
    ext.delete_custom_resource_definition(f"{plural}.{group}")
    return {"ok": True}


def events():
    core, ev1 = client.CoreV1Api(), client.EventsV1Api()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    core.create_namespaced_config_map(NS, {"metadata": {"name": "py-evented"}})
    ref = client.V1ObjectReference(api_version="v1", kind="ConfigMap", name="py-evented", namespace=NS)
    # What an event recorder writes: a v1 Event, then the same event again as a count bump.
    ev = core.create_namespaced_event(NS, client.CoreV1Event(
        metadata=client.V1ObjectMeta(name=f"py-evented.{uuid.uuid4().hex[:12]}"),
        involved_object=ref, reason="Synced", message="synced by the python client", type="Normal",
        source=client.V1EventSource(component="py-recorder"), first_timestamp=now, last_timestamp=now, count=1,
    ))
    bumped = core.patch_namespaced_event(ev.metadata.name, NS, {"count": 2, "lastTimestamp": now})
    assert bumped.count == 2, bumped
    listed = core.list_namespaced_event(NS, field_selector="involvedObject.name=py-evented")
    assert [e.reason for e in listed.items] == ["Synced"], listed.items
    # events.k8s.io/v1, the newer recorder's form.
    new = ev1.create_namespaced_event(NS, client.EventsV1Event(
        metadata=client.V1ObjectMeta(name=f"py-evented.{uuid.uuid4().hex[:12]}"),
        event_time=time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
        reporting_controller="example.com/py-recorder", reporting_instance="py-1",
        action="Sync", reason="Synced", note="synced again", type="Normal", regarding=ref,
    ))
    assert new.regarding.name == "py-evented", new
    both = core.list_namespaced_event(NS, field_selector="involvedObject.name=py-evented")
    assert len(both.items) == 2, both.items
    core.delete_namespaced_config_map("py-evented", NS)
    return {"ok": True}


def concurrent_patches():
    core = client.CoreV1Api()
    name = "py-contended"
    core.create_namespaced_config_map(NS, {"metadata": {"name": name}, "data": {}})
    failures, lock = [], threading.Lock()

    def writer(w):
        for i in range(w, 100, 8):
            try:
                core.patch_namespaced_config_map(name, NS, {"data": {f"k{i}": str(i)}})
            except ApiException as e:
                with lock:
                    failures.append((i, e.status))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [], failures
    data = core.read_namespaced_config_map(name, NS).data
    assert len(data) == 100, sorted(data)
    core.delete_namespaced_config_map(name, NS)
    return {"ok": True, "keys": len(data)}


def dynamic_client():
    """kubernetes.dynamic (what Ansible's kubernetes.core uses): every resource found through discovery."""
    dyn = dynamic.DynamicClient(client.ApiClient())
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert cms.namespaced and "patch" in cms.verbs, cms.verbs
    assert deployments.subresources["scale"].kind == "Scale", deployments.subresources
    cms.create(namespace=NS, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-dyn"}, "data": {"a": "1"}})
    got = cms.patch(namespace=NS, name="py-dyn", body={"data": {"b": "2"}}, content_type="application/merge-patch+json")
    assert dict(got.data) == {"a": "1", "b": "2"}, got.data
    # This client version cannot send a dict as an apply patch (its REST layer serialises only JSON content
    # types), so the body goes as JSON text, which is YAML too.
    applied = cms.server_side_apply(
        namespace=NS, name="py-dyn", field_manager="py-dyn", force_conflicts=True,
        body=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-dyn"}, "data": {"a": "3"}}),
    )
    assert dict(applied.data) == {"a": "3", "b": "2"}, applied.data
    listed = cms.get(namespace=NS, field_selector="metadata.name=py-dyn")
    assert [i.metadata.name for i in listed.items] == ["py-dyn"], listed
    events = [e["type"] for e in cms.watch(namespace=NS, field_selector="metadata.name=py-dyn",
                                           resource_version=listed.metadata.resourceVersion, timeout=1)]
    assert events == [], events
    cms.delete(namespace=NS, name="py-dyn")
    assert status_of(lambda: core_read("py-dyn")) == 404
    return {"ok": True}


def core_read(name):
    return client.CoreV1Api().read_namespaced_config_map(name, NS)


def leader():
    """Runs for leadership of the ConfigMap lock; prints `leading <identity>` when it leads. Never returns."""
    from kubernetes.leaderelection import electionconfig, leaderelection
    from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock

    identity = sys.argv[3]

    def lead():
        print(f"leading {identity}", flush=True)

    leaderelection.LeaderElection(electionconfig.Config(
        ConfigMapLock("py-leader", NS, identity), lease_duration=3, renew_deadline=2, retry_period=1,
        onstarted_leading=lead, onstopped_leading=lambda: print(f"stopped {identity}", flush=True),
    )).run()


def watch_forever():
    """Watches ConfigMaps labelled suite=resume, resuming from the last resourceVersion when a stream ends
    (as a controller would); prints each event as a JSON line."""
    core = client.CoreV1Api()
    rv = core.list_namespaced_config_map(NS, label_selector="suite=resume").metadata.resource_version
    print(json.dumps({"type": "LISTED", "resourceVersion": rv}), flush=True)
    while True:
        try:
            for event in watch.Watch().stream(
                core.list_namespaced_config_map, NS, label_selector="suite=resume", resource_version=rv,
                allow_watch_bookmarks=True, timeout_seconds=30,
            ):
                obj = event["object"]
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    rv = obj.metadata.resource_version
                    print(json.dumps({"type": event["type"], "name": obj.metadata.name, "data": obj.data}), flush=True)
            print(json.dumps({"type": "ENDED"}), flush=True)
        except Exception as e:  # the apiserver went away: retry the watch from rv
            print(json.dumps({"type": "RETRY", "error": type(e).__name__}), flush=True)
            time.sleep(0.2)


CASES = {f.__name__: f for f in [crud, patches, dynamic_client, watches, token_request, custom_resources, events, concurrent_patches,
                                  leader, watch_forever]}

if __name__ == "__main__":
    config.load_kube_config(config_file=sys.argv[1])
    result = CASES[sys.argv[2]]()
    print(json.dumps(result), flush=True)
