// RBAC watch rights as NATS subjects and permissions.
import { describe, expect, it } from "vitest";
import { authorizationConfig, certificateSubject, consumerPermissions, inboxPrefixFor, watchableSubjects } from "../src/index.js";

describe("watchableSubjects", () => {
  it("turns cluster-wide watch rules into subjects of every namespace, and skips rules without watch", () => {
    expect(
      watchableSubjects([
        { apiGroups: ["apps"], resources: ["deployments", "replicasets"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
        { apiGroups: ["certificates.orch.io"], resources: ["certificatesigningrequests"], verbs: ["*"] },
      ]),
    ).toEqual([
      "orch.events.apps.deployments.>",
      "orch.events.apps.replicasets.>",
      "orch.events.certificates%2Eorch%2Eio.certificatesigningrequests.>",
    ]);
  });

  it("confines a RoleBinding's rules to its namespace, and resourceNames to those names", () => {
    expect(watchableSubjects([{ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["watch"] }], "team.a")).toEqual([
      "orch.events.core.serviceaccounts.team%2Ea.*",
    ]);
    expect(watchableSubjects([{ apiGroups: [""], resources: ["secrets"], resourceNames: ["one", "two"], verbs: ["watch"] }])).toEqual([
      "orch.events.core.secrets.*.one",
      "orch.events.core.secrets.*.two",
    ]);
  });

  it("keeps wildcards as NATS wildcards and leaves subresources out", () => {
    expect(watchableSubjects([{ apiGroups: ["*"], resources: ["*", "pods/status"], verbs: ["watch"] }])).toEqual(["orch.events.*.*.>"]);
  });
});

describe("consumerPermissions", () => {
  it("permits the consumers of the watchable subjects, the identity's own inbox, and no publishing", () => {
    const p = consumerPermissions("system:orch:csr-signer", ["orch.events.apps.deployments.>"]);
    expect(p.subscribe.allow).toEqual(["_INBOX.system:orch:csr-signer.>", "orch.events.apps.deployments.>"]);
    expect(p.publish.allow).toContain("$JS.API.CONSUMER.CREATE.ORCH_EVENTS.*.orch.events.apps.deployments.>");
    expect(p.publish.allow.some((s) => s.startsWith("orch.events") || s === ">" || s.includes("MSG.GET") || s.includes("DURABLE"))).toBe(
      false,
    );
    expect(p.publish.allow).not.toContain("$JS.API.CONSUMER.CREATE.ORCH_EVENTS");
  });

  it("gives each identity an inbox of its own, with NATS' special characters escaped", () => {
    expect(inboxPrefixFor("a.b*c")).toBe("_INBOX.a%2Eb%2Ac");
  });
});

describe("certificateSubject and authorizationConfig", () => {
  it("writes subjects as NATS maps them, escaping RFC 2253's special characters", () => {
    expect(certificateSubject("orch-admin", ["system:masters"])).toBe("CN=orch-admin,O=system:masters");
    expect(certificateSubject("a,b+c")).toBe("CN=a\\,b\\+c");
  });

  it("writes a NATS authorization block that lists each user with its permissions", () => {
    const text = authorizationConfig([{ subject: "CN=alice", permissions: consumerPermissions("alice", ["orch.events.core.pods.>"]) }]);
    expect(text).toMatch(/^authorization \{\n {2}users = \[\n/m);
    expect(text).toContain('{"user":"CN=alice","permissions":{"publish":{"allow":[');
  });
});
