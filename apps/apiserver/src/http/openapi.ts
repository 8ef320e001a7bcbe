// The OpenAPI documents kubectl needs: v3 per group-version, listing each kind's operations and the
// `fieldValidation` parameter so kubectl leaves validation to the server, and the tiny v2 document
// kubectl fetches for `kind: List` files.
import type { KindDefinition, KindRegistry } from "@orch/registry";
import { createHash } from "node:crypto";

/** A protobuf `openapi_v2.Document` with swagger "2.0" and an info block, and nothing else. */
export const OPENAPI_V2_STUB = Buffer.from("0a03322e3012150a0a4b756265726e65746573120776312e33322e34", "hex");

const gvPath = (k: Pick<KindDefinition, "group" | "version">) => (k.group ? `apis/${k.group}/${k.version}` : `api/${k.version}`);

const WRITE_PARAMS = ["dryRun", "fieldManager", "fieldValidation"].map((name) => ({ name, in: "query", schema: { type: "string" } }));

function kindDocument(kinds: KindDefinition[]) {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const k of kinds) {
    const gvk = { group: k.group, version: k.version, kind: k.kind };
    const base = `/${gvPath(k)}${k.namespaced ? "/namespaces/{namespace}" : ""}/${k.plural}`;
    const op = (action: string, params = WRITE_PARAMS) => ({
      "x-kubernetes-action": action,
      "x-kubernetes-group-version-kind": gvk,
      parameters: params,
      responses: { "200": { description: "OK" } },
    });
    paths[base] = { get: op("list", []), post: op("post"), delete: op("deletecollection", []) };
    // The patch operation names no request body, so `kubectl apply` and `edit` take strategic merge metadata
    // from their compiled-in types (core, apps and the k8s.io groups) and send JSON merge patches for the rest.
    // Advertising application/strategic-merge-patch+json here would make them compute patches from these
    // schemas, which carry no x-kubernetes-patch-strategy.
    paths[`${base}/{name}`] = {
      get: op("get", []),
      put: op("put"),
      patch: op("patch", [...WRITE_PARAMS, { name: "force", in: "query", schema: { type: "boolean" } }]),
      delete: op("delete", []),
    };
    schemas[`${k.group || "core"}.${k.version}.${k.kind}`] = {
      type: "object",
      "x-kubernetes-group-version-kind": [gvk],
      properties: { apiVersion: { type: "string" }, kind: { type: "string" }, metadata: { type: "object" } },
    };
  }
  return { openapi: "3.0.0", info: { title: "orch", version: "v1.32.4" }, paths, components: { schemas } };
}

export class OpenApiDocuments {
  private cache: { root: unknown; docs: Map<string, string> } | undefined;

  constructor(private readonly registry: KindRegistry) {
    registry.onChange(() => (this.cache = undefined));
  }

  private build() {
    if (this.cache) return this.cache;
    const byGv = new Map<string, KindDefinition[]>();
    for (const k of this.registry.all()) {
      const key = gvPath(k);
      byGv.set(key, [...(byGv.get(key) ?? []), k]);
    }
    const docs = new Map<string, string>();
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [key, kinds] of byGv) {
      const text = JSON.stringify(kindDocument(kinds));
      docs.set(key, text);
      const hash = createHash("sha256").update(text).digest("hex").slice(0, 32).toUpperCase();
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
    }
    this.cache = { root: { paths }, docs };
    return this.cache;
  }

  root(): unknown {
    return this.build().root;
  }

  document(path: string): string | undefined {
    return this.build().docs.get(path);
  }
}
