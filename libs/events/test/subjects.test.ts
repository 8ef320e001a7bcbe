import { describe, expect, it } from "vitest";
import { decodeToken, encodeToken, eventSubject, parseEventSubject, subjectForChange, type SubjectParts } from "../src/index.js";

const tricky = [
  "web",
  "a.b",
  "*",
  ">",
  "a*b>c",
  "100%",
  "%2E", // looks encoded already: must survive as the literal text
  "%",
  "two words",
  "tab\there",
  "line\nbreak\r",
  "non\u00a0breaking",
  "line\u2028separator", // whitespace above U+00FF
  "ideographic\u3000space",
  "ünïcödé-名前",
  "_",
  "core",
];

describe("subject encoding", () => {
  it("round-trips every token and leaves nothing NATS would read as syntax", () => {
    for (const token of tricky) {
      const encoded = encodeToken(token);
      expect(decodeToken(encoded), JSON.stringify(token)).toBe(token);
      expect(encoded).not.toMatch(/[.*>\s]/);
    }
    expect(encodeToken("certificates.orch.io")).toBe("certificates%2Eorch%2Eio");
    expect(encodeToken("plain-name-1")).toBe("plain-name-1");
  });

  it("builds orch.events.<group>.<resource>.<namespace>.<name>, core and cluster scope spelled out", () => {
    expect(eventSubject({ group: "apps", resource: "deployments", namespace: "default", name: "web" })).toBe(
      "orch.events.apps.deployments.default.web",
    );
    expect(eventSubject({ group: "", resource: "namespaces", namespace: "", name: "default" })).toBe(
      "orch.events.core.namespaces._.default",
    );
    expect(eventSubject({ group: "certificates.k8s.io", resource: "certificatesigningrequests", namespace: "", name: "node.1" })).toBe(
      "orch.events.certificates%2Ek8s%2Eio.certificatesigningrequests._.node%2E1",
    );
    expect(subjectForChange({ resource: "core/pods", namespace: "default", name: "p" })).toBe("orch.events.core.pods.default.p");
    expect(subjectForChange({ resource: "apps/deployments", namespace: "ns", name: "d" })).toBe("orch.events.apps.deployments.ns.d");
    expect(subjectForChange({ resource: "certificates.k8s.io/certificatesigningrequests", namespace: "", name: "c" })).toBe(
      "orch.events.certificates%2Ek8s%2Eio.certificatesigningrequests._.c",
    );
  });

  it("parses what it builds, and nothing else", () => {
    const cases: SubjectParts[] = [
      { group: "", resource: "pods", namespace: "default", name: "web" },
      { group: "apps", resource: "deployments", namespace: "", name: "cluster-thing" },
      { group: "certificates.k8s.io", resource: "certificatesigningrequests", namespace: "", name: "node.csr" },
    ];
    for (const name of tricky) cases.push({ group: "example.com", resource: "widgets", namespace: "team-a", name });
    for (const parts of cases) {
      const subject = eventSubject(parts);
      expect(subject.split(".")).toHaveLength(6);
      expect(parseEventSubject(subject)).toEqual(parts);
    }
    expect(parseEventSubject("orch.other.core.pods.default.web")).toBeUndefined();
    expect(parseEventSubject("orch.events.core.pods.default")).toBeUndefined();
    expect(parseEventSubject("orch.events.core.pods.default.web.extra")).toBeUndefined();
    expect(parseEventSubject("orch.events.x.y.z.%FF")).toEqual({ group: "x", resource: "y", namespace: "z", name: "%FF" });
  });
});
