// Bodies kubectl v1.32.4 really sent, and the JSON each must decode to; fixtures/protobuf/README.md says how the
// expectations were derived (mostly kubectl's own `--dry-run=client -o json`).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeKubernetesProtobuf, decodeKubernetesProtobufWithDiagnostics } from "../src/protobuf/index.js";

const fixtures = new URL("./fixtures/protobuf/", import.meta.url);

/** Fixture name → the kubectl command that sent it. */
const captures: Record<string, string> = {
  namespace: "create namespace x",
  "namespace-save-config": "create namespace y --save-config",
  serviceaccount: "create serviceaccount y",
  "secret-generic": "create secret generic s --from-literal=a=b --from-literal=empty= --from-file=bin.dat --type=example.com/custom",
  "secret-docker-registry":
    "create secret docker-registry r --docker-server=reg.example --docker-username=u --docker-password=p " + "--docker-email=e@example.com",
  configmap: "create configmap c --from-literal=k=v --from-literal=empty= --from-file=f.txt --from-file=bin.dat",
  deployment: "create deployment d --image=nginx --replicas=3 --port=80",
  "deployment-multi": "create deployment m --image=nginx --image=busybox:1.36 --replicas=0",
  "deployment-command": "create deployment c --image=busybox -- sleep 3600",
  "service-clusterip": "create service clusterip svc --tcp=80:8080 --tcp=443:8443",
  "service-nodeport": "create service nodeport np --tcp=80:8080 --node-port=30080",
  quota: "create quota q --hard=cpu=1,memory=1G,pods=2 --scopes=BestEffort",
  role: "create role r --verb=get,list --resource=pods,deployments.apps --resource-name=a",
  clusterrole: "create clusterrole cr --verb=get --non-resource-url=/logs/* --non-resource-url=/healthz",
  "clusterrole-aggregate": "create clusterrole agg --aggregation-rule=rbac.example.com/aggregate=true",
  rolebinding: "create rolebinding rb --role=r --user=u --group=g --serviceaccount=default:sa",
  clusterrolebinding: "create clusterrolebinding crb --clusterrole=cr --user=u",
  job: "create job j --image=busybox -- echo hi",
  cronjob: "create cronjob cj --image=busybox --schedule='*/1 * * * *' --restart=OnFailure -- date",
  ingress: "create ingress i --class=nginx --rule=foo.com/bar=svc:80 --rule='bar.com/*=svc2:http,tls=sec' --annotation=a=b",
  pdb: "create pdb p --selector=app=x --min-available=50%",
  priorityclass: "create priorityclass pc --value=1000 --global-default --description=desc --preemption-policy=Never",
  token: "create token sa --audience=a --duration=10m",
  "token-bound":
    "create token sa --audience=a --audience=b --bound-object-kind=Pod --bound-object-name=p " +
    "--bound-object-uid=7b0a9f44-0000-4000-8000-000000000001",
  whoami: "auth whoami",
  "can-i-get-pods": "auth can-i get pods",
  "can-i-subresource": "auth can-i get pods --subresource=log -n kube-system",
  "can-i-named": "auth can-i create deployments.apps/web --all-namespaces",
  "can-i-nonresource": "auth can-i get /logs",
  "can-i-list": "auth can-i --list -n team",
  "csr-approve": "certificate approve csr-1",
  "pod-debug-copy":
    "debug rich --copy-to=rich-copy --image=busybox:1.36 --keep-labels --keep-annotations --keep-liveness " +
    "--keep-readiness --keep-startup --same-node --share-processes=false --profile=legacy",
};

/** Expectations written from the served object, in its key order rather than Go's. */
const servedObjects = new Set(["pod-debug-copy", "csr-approve"]);

const body = (name: string) => new Uint8Array(readFileSync(new URL(`${name}.pb`, fixtures)));
const expected = (name: string): unknown => JSON.parse(readFileSync(new URL(`${name}.json`, fixtures), "utf8"));

describe("protobuf bodies sent by kubectl 1.32", () => {
  it("lists every fixture", () => {
    const names = readdirSync(fixtures)
      .filter((file) => file.endsWith(".pb"))
      .map((file) => file.slice(0, -3));
    expect(names.sort()).toEqual(Object.keys(captures).sort());
  });

  it.each(Object.entries(captures))("%s (kubectl %s)", (name) => {
    const { object, unknownFields } = decodeKubernetesProtobufWithDiagnostics(body(name));
    expect(object).toStrictEqual(expected(name));
    if (!servedObjects.has(name)) expect(JSON.stringify(object)).toBe(JSON.stringify(expected(name)));
    expect(unknownFields).toEqual([]);
  });

  it("decodes the PodSpec fields kubectl debug copied, down to zero-valued pointers", () => {
    const pod = decodeKubernetesProtobuf(body("pod-debug-copy")) as { spec: Record<string, unknown> };
    expect(pod.spec).toMatchObject({
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      priority: -5,
      securityContext: { runAsUser: 0, supplementalGroups: [4000, 5000] },
      tolerations: [expect.anything(), { operator: "Exists", effect: "NoExecute", tolerationSeconds: 0 }],
    });
  });

  it("keeps metadata timestamps at second precision and managedFields as JSON", () => {
    const csr = decodeKubernetesProtobuf(body("csr-approve")) as { metadata: Record<string, unknown> };
    expect(csr.metadata).toMatchObject({
      creationTimestamp: "2025-03-04T05:06:07Z",
      deletionTimestamp: "2025-03-05T00:00:00Z",
      deletionGracePeriodSeconds: 0,
      managedFields: [
        { fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:a": {} } }, "f:spec": { "f:usages": {} } } },
        { subresource: "approval" },
      ],
    });
  });
});
