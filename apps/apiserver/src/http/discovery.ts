// Discovery documents (legacy and aggregated v2), built from the live kind registry.
import { createHash } from "node:crypto";
import type { KindDefinition, KindRegistry } from "@orch/registry";

export const AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

const SUBRESOURCE_VERBS = ["get", "patch", "update"];

const sorted = (verbs: readonly string[]) => [...verbs].sort();

/** Kubernetes' version priority: GA before beta before alpha, higher numbers first, others last. */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v] as const;
    return [1, m[2] === "alpha" ? 1 : m[2] === "beta" ? 2 : 3, Number(m[1]), Number(m[3] ?? 0)] as const;
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (rb[i] as number) - (ra[i] as number);
  return ra[0] === 0 ? String(ra[3]).localeCompare(String(rb[3])) : (rb[3] as number) - (ra[3] as number);
}

interface Subresource {
  name: string;
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}

function subresourceKinds(kind: KindDefinition): Subresource[] {
  const subs: Subresource[] = Object.keys(kind.subresources).map((s) => ({
    name: s,
    group: kind.group,
    version: kind.version,
    kind: kind.kind,
    verbs: SUBRESOURCE_VERBS,
  }));
  if (kind.scale) subs.push({ name: "scale", group: "autoscaling", version: "v1", kind: "Scale", verbs: SUBRESOURCE_VERBS });
  for (const [name, a] of Object.entries(kind.actions ?? {})) {
    subs.push({ name, group: a.group, version: a.version, kind: a.kind, verbs: ["create"] });
  }
  return subs.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * discovery.StorageVersionHash of `<group>/<version>/<kind>` in the storage version: the first 8 bytes
 * of its SHA-256 in base64. Clients (the storage version migrator) compare it to see a storage change.
 */
export function storageVersionHash(groupVersionKind: string): string {
  return createHash("sha256").update(groupVersionKind).digest().subarray(0, 8).toString("base64");
}

export function apiResourceList(groupVersion: string, kinds: KindDefinition[]) {
  const resources = [];
  for (const k of [...kinds].sort((a, b) => a.plural.localeCompare(b.plural))) {
    resources.push({
      name: k.plural,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: sorted(k.verbs),
      ...(k.shortNames.length ? { shortNames: [...k.shortNames] } : {}),
      ...(k.categories.length ? { categories: [...k.categories] } : {}),
      ...(k.custom && k.storageApiVersion ? { storageVersionHash: storageVersionHash(`${k.storageApiVersion}/${k.kind}`) } : {}),
    });
    for (const s of subresourceKinds(k)) {
      resources.push({
        name: `${k.plural}/${s.name}`,
        singularName: "",
        namespaced: k.namespaced,
        ...(s.group !== k.group || s.version !== k.version ? { group: s.group, version: s.version } : {}),
        kind: s.kind,
        verbs: s.verbs,
      });
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion, resources };
}

/** Named groups with versions in preference order. */
export function namedGroups(registry: KindRegistry) {
  const out = [];
  for (const [group, versions] of registry.groups()) {
    if (group === "" || [...versions.values()].every((kinds) => kinds.every((k) => k.unlisted))) continue;
    const names = [...versions.keys()].sort(compareVersions);
    const gvs = names.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
    out.push({ name: group, versions: gvs, preferredVersion: gvs[0]!, kinds: versions });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export function apiGroupList(registry: KindRegistry) {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: namedGroups(registry).map(({ kinds: _k, ...g }) => g),
  };
}

function aggregatedGroup(name: string, versions: Map<string, KindDefinition[]>) {
  return {
    metadata: { name, creationTimestamp: null },
    versions: [...versions.keys()].sort(compareVersions).map((version) => ({
      version,
      freshness: "Current",
      resources: [...versions.get(version)!]
        .sort((a, b) => a.plural.localeCompare(b.plural))
        .map((k) => ({
          resource: k.plural,
          responseKind: { group: k.group, version: k.version, kind: k.kind },
          scope: k.namespaced ? "Namespaced" : "Cluster",
          singularResource: k.singular,
          verbs: sorted(k.verbs),
          ...(k.shortNames.length ? { shortNames: [...k.shortNames] } : {}),
          ...(k.categories.length ? { categories: [...k.categories] } : {}),
          ...(subresourceKinds(k).length
            ? {
                subresources: subresourceKinds(k).map((s) => ({
                  subresource: s.name,
                  responseKind: { group: s.group, version: s.version, kind: s.kind },
                  verbs: s.verbs,
                })),
              }
            : {}),
        })),
    })),
  };
}

export function aggregatedDiscovery(registry: KindRegistry, core: boolean) {
  const groups = registry.groups();
  const items = core
    ? groups.has("")
      ? [aggregatedGroup("", groups.get("")!)]
      : []
    : namedGroups(registry).map((g) => aggregatedGroup(g.name, g.kinds));
  return { kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {}, items };
}

export function wantsAggregated(accept: string | undefined): boolean {
  return !!accept && accept.split(",").some((r) => /as=APIGroupDiscoveryList/.test(r) && /v=v2(;|$|\s)/.test(`${r.replace(/\s/g, "")};`));
}
