import { namingProfile } from "@orch/api";
import { describe, expect, it } from "vitest";
import { KindRegistry, builtinKinds } from "../src/index.js";
import { defineKind } from "../src/generic/define.js";
import * as v from "valibot";

const widget = defineKind({
  group: "example.com",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  namespaced: true,
  schema: v.object({}),
});

describe("KindRegistry", () => {
  it("adds and removes kinds while running, and tells listeners", () => {
    const registry = new KindRegistry();
    let changes = 0;
    registry.onChange(() => changes++);
    registry.add(widget);
    expect(registry.lookup("example.com", "v1", "widgets")).toBe(widget);
    expect(registry.groups().get("example.com")?.get("v1")).toEqual([widget]);
    registry.remove("example.com", "v1", "widgets");
    expect(registry.lookup("example.com", "v1", "widgets")).toBeUndefined();
    expect(registry.groups().has("example.com")).toBe(false);
    expect(changes).toBe(2);
    registry.remove("example.com", "v1", "widgets");
    expect(changes).toBe(2); // removing what is not there changes nothing
  });

  it("names every built-in group from the profile", () => {
    const orch = builtinKinds(namingProfile("orch")).map((k) => k.group);
    const kube = builtinKinds(namingProfile("kubernetes")).map((k) => k.group);
    expect(orch).toContain("certificates.orch.io");
    expect(orch).toContain("apiextensions.orch.io");
    expect(kube).toContain("certificates.k8s.io");
    expect(kube).toContain("scheduling.k8s.io");
    expect(kube.filter((g) => g.endsWith("orch.io"))).toEqual([]);
    // Core and apps have no domain in either profile.
    expect(orch.filter((g) => g === "" || g === "apps")).toEqual(kube.filter((g) => g === "" || g === "apps"));
  });

  it("declares the subresources the spec lists", () => {
    const kinds = new Map(builtinKinds(namingProfile()).map((k) => [k.kind, k]));
    const subs = (k: string) => Object.keys(kinds.get(k)!.subresources).sort();
    expect(subs("CertificateSigningRequest")).toEqual(["approval", "status"]);
    expect(subs("Deployment")).toEqual(["status"]);
    expect(subs("ReplicationController")).toEqual(["status"]);
    expect(subs("CustomResourceDefinition")).toEqual(["status"]);
    expect(subs("Pod")).toEqual(["status"]);
    expect(subs("PodTemplate")).toEqual([]);
    expect(kinds.get("ClusterTrustBundle")!.namespaced).toBe(false);
    expect(kinds.get("ServiceAccount")!.namespaced).toBe(true);
  });
});
