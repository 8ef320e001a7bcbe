// The OpenAPI documents kubectl and client generators read, as kube-openapi serves them: /openapi/v3 (a
// discovery document naming one document per group-version, each URL carrying its content hash) and
// /openapi/v2 (one Swagger 2.0 document). Each kind has its field schema (see openapi-schema.ts) tagged
// with `x-kubernetes-group-version-kind`, and its operations with the `fieldValidation` parameter (so
// kubectl leaves validation to the server) and the patch types the kind accepts.
import { ListMeta, type NamingProfile, ObjectMeta } from "@orch/api";
import type { KindDefinition, KindRegistry } from "@orch/registry";
import { createHash } from "node:crypto";
import {
  type OpenApiSchema,
  TYPE_FIELDS,
  ValibotConverter,
  customResourceComponent,
  customResourceSchema,
  referencedComponents,
  toSwaggerV2,
} from "./openapi-schema.js";
import { swaggerToProtobuf } from "./openapi-v2-protobuf.js";

// Asked for with an `@` (client-go), answered without: Go's mime parser refuses the `@` in a Content-Type.
const V2_PROTOBUF_ASKED = "com.github.proto-openapi.spec.v2@v1.0+protobuf";
const V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const INFO = { title: "Kubernetes", version: "v1.32.4" };

const gvPath = (k: Pick<KindDefinition, "group" | "version">) => (k.group ? `apis/${k.group}/${k.version}` : `api/${k.version}`);
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const query = (name: string, type = "string") => ({ name, in: "query", schema: { type, uniqueItems: true } });
const WRITE_PARAMS = ["dryRun", "fieldManager", "fieldValidation"].map((name) => query(name));
const READ_LIST_PARAMS = [
  ...["continue", "fieldSelector", "labelSelector", "resourceVersion", "resourceVersionMatch"].map((name) => query(name)),
  query("limit", "integer"),
  query("timeoutSeconds", "integer"),
  query("watch", "boolean"),
];
const pathParam = (name: string) => ({ name, in: "path", required: true, schema: { type: "string", uniqueItems: true } });

/** Patch bodies a built-in kind takes; custom resources take no strategic merge patch (Kubernetes' CRD handler). */
const PATCH_TYPES = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"];
const STRATEGIC_MERGE = "application/strategic-merge-patch+json";

interface Document {
  text: string | Buffer;
  etag: string;
}

const documentOf = (value: unknown): Document => {
  const text = JSON.stringify(value);
  return { text, etag: createHash("sha512").update(text).digest("hex").toUpperCase() };
};

/** The paths and component schemas of one kind, in OpenAPI v3. */
function kindEntries(k: KindDefinition, schema: string, list: string) {
  const gvk = { group: k.group, version: k.version, kind: k.kind };
  const base = `/${gvPath(k)}${k.namespaced ? "/namespaces/{namespace}" : ""}/${k.plural}`;
  const scope = k.namespaced ? [pathParam("namespace")] : [];
  const json = (name: string) => ({ "application/json": { schema: schemaRef(name) }, "application/yaml": { schema: schemaRef(name) } });
  const op = (action: string, params: object[], response: string, body?: Record<string, unknown>) => ({
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    parameters: params,
    ...(body ? { requestBody: { required: true, content: body } } : {}),
    responses: { "200": { description: "OK", content: json(response) }, "401": { description: "Unauthorized" } },
  });
  const patchTypes = k.custom ? PATCH_TYPES : [...PATCH_TYPES, STRATEGIC_MERGE];
  const patchBody = Object.fromEntries(patchTypes.map((t) => [t, { schema: { type: "object" } }]));
  const paths: Record<string, unknown> = {
    [base]: {
      get: op("list", [...scope, ...READ_LIST_PARAMS], list),
      post: op("post", [...scope, ...WRITE_PARAMS], schema, { "*/*": { schema: schemaRef(schema) } }),
      delete: op("deletecollection", [...scope, ...READ_LIST_PARAMS], "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
    },
    [`${base}/{name}`]: {
      get: op("get", [...scope, pathParam("name")], schema),
      put: op("put", [...scope, pathParam("name"), ...WRITE_PARAMS], schema, { "*/*": { schema: schemaRef(schema) } }),
      patch: op("patch", [...scope, pathParam("name"), ...WRITE_PARAMS, query("force", "boolean")], schema, patchBody),
      delete: op("delete", [...scope, pathParam("name"), ...WRITE_PARAMS], "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
    },
  };
  if (k.subresources.status) {
    // Kubernetes lists /status with the kind's own group-version-kind and operations.
    paths[`${base}/{name}/status`] = {
      get: op("get", [...scope, pathParam("name")], schema),
      put: op("put", [...scope, pathParam("name"), ...WRITE_PARAMS], schema, { "*/*": { schema: schemaRef(schema) } }),
      patch: op("patch", [...scope, pathParam("name"), ...WRITE_PARAMS, query("force", "boolean")], schema, patchBody),
    };
  }
  return paths;
}

/** `<Kind>List`: apiVersion, kind, ListMeta and the items (Kubernetes publishes one per kind). */
function listSchema(k: KindDefinition, item: string, listMeta: string): OpenApiSchema {
  return {
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: { description: TYPE_FIELDS.apiVersion, type: "string" },
      items: { type: "array", items: schemaRef(item) },
      kind: { description: TYPE_FIELDS.kind, type: "string" },
      metadata: { description: "Standard list metadata.", allOf: [schemaRef(listMeta)] },
    },
    "x-kubernetes-group-version-kind": [{ group: k.group, version: k.version, kind: k.listKind }],
  };
}

const STATUS_SCHEMA: OpenApiSchema = {
  description: "Status is a return value for calls that don't return other objects.",
  type: "object",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    code: { type: "integer", format: "int32" },
    message: { type: "string" },
    reason: { type: "string" },
    status: { type: "string" },
    details: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  },
  "x-kubernetes-group-version-kind": [{ group: "", version: "v1", kind: "Status" }],
};

/** An OpenAPI v3 operation as Swagger 2.0 writes it: typed parameters, a body parameter, consumes/produces. */
function operationV2(op: Record<string, unknown>) {
  const { parameters, requestBody, responses, ...rest } = op as {
    parameters: { schema?: Record<string, unknown> }[];
    requestBody?: { content: Record<string, { schema: unknown }> };
    responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  };
  const params: unknown[] = parameters.map(({ schema, ...p }) => ({ ...p, ...schema }));
  if (requestBody) {
    const first = Object.values(requestBody.content)[0];
    params.push({ name: "body", in: "body", required: true, schema: toSwaggerV2(first?.schema) });
  }
  return {
    ...rest,
    ...(requestBody ? { consumes: Object.keys(requestBody.content) } : {}),
    produces: ["application/json", "application/yaml"],
    parameters: params,
    responses: Object.fromEntries(
      Object.entries(responses).map(([code, r]) => {
        const schema = r.content ? Object.values(r.content)[0]?.schema : undefined;
        return [code, { description: r.description, ...(schema ? { schema: toSwaggerV2(schema) } : {}) }];
      }),
    ),
  };
}

interface Built {
  root: Document;
  groupVersions: Map<string, Document>;
  v2: Document;
  /** The v2 document's protobuf form, encoded when first asked for; same ETag as the JSON, as kube-openapi. */
  v2Protobuf?: Document;
  lastModified: string;
}

export class OpenApiDocuments {
  private cache: Built | undefined;
  /** Built-in schemas never change: converted once, shared by every rebuild. */
  private readonly builtins = new ValibotConverter();

  constructor(
    private readonly registry: KindRegistry,
    private readonly profile: NamingProfile,
  ) {
    registry.onChange(() => (this.cache = undefined));
  }

  private build(): Built {
    if (this.cache) return this.cache;
    const kinds = [...this.registry.all()].sort(
      (a, b) => Number(!!a.custom) - Number(!!b.custom) || a.group.localeCompare(b.group) || a.version.localeCompare(b.version),
    );
    const objectMeta = this.builtins.named(ObjectMeta);
    const listMeta = this.builtins.named(ListMeta);
    // Built-in kinds first: converting them fills the converter's components with the types they use.
    const names = new Map(
      kinds.filter((k) => !k.custom).map((k) => [k, this.builtins.kind({ group: k.group, version: k.version, kind: k.kind }, k.schema)]),
    );
    const components = new Map(this.builtins.components);
    components.set("io.k8s.apimachinery.pkg.apis.meta.v1.Status", STATUS_SCHEMA);
    const byGv = new Map<string, { paths: Record<string, unknown>; roots: string[] }>();
    for (const k of kinds) {
      const gvk = { group: k.group, version: k.version, kind: k.kind };
      let name: string;
      if (k.custom) {
        name = customResourceComponent(k.group, k.version, k.kind);
        components.set(name, customResourceSchema(k.openAPIV3Schema, gvk, this.profile.extensionPrefix));
      } else {
        name = names.get(k)!;
      }
      const list = `${name}List`;
      components.set(list, listSchema(k, name, listMeta));
      const entry = byGv.get(gvPath(k)) ?? { paths: {}, roots: [objectMeta, "io.k8s.apimachinery.pkg.apis.meta.v1.Status"] };
      Object.assign(entry.paths, kindEntries(k, name, list));
      entry.roots.push(name, list);
      byGv.set(gvPath(k), entry);
    }
    const groupVersions = new Map<string, Document>();
    const discovery: Record<string, { serverRelativeURL: string }> = {};
    const allPaths: Record<string, unknown> = {};
    for (const [key, { paths, roots }] of [...byGv].sort(([a], [b]) => a.localeCompare(b))) {
      const names = [...referencedComponents(roots, components)].sort();
      const schemas = Object.fromEntries(names.map((n) => [n, components.get(n)]));
      const doc = documentOf({ openapi: "3.0.0", info: INFO, paths, components: { schemas } });
      groupVersions.set(key, doc);
      discovery[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.etag}` };
      Object.assign(allPaths, paths);
    }
    const v2Paths = Object.fromEntries(
      Object.entries(allPaths).map(([path, ops]) => [
        path,
        Object.fromEntries(Object.entries(ops as Record<string, Record<string, unknown>>).map(([verb, op]) => [verb, operationV2(op)])),
      ]),
    );
    const definitions = Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b)).map(([n, s]) => [n, toSwaggerV2(s, n)]));
    this.cache = {
      root: documentOf({ paths: discovery }),
      groupVersions,
      v2: documentOf({ swagger: "2.0", info: INFO, paths: v2Paths, definitions }),
      lastModified: new Date().toUTCString(),
    };
    return this.cache;
  }

  /** GET /openapi/v3: the documents' URLs, each with its hash. */
  root(request: Request): Response {
    return serve(request, this.build().root, "application/json", this.build().lastModified);
  }

  /** GET /openapi/v3/<api/v1 | apis/group/version>, as kube-openapi's handler3 answers it. */
  groupVersion(request: Request, path: string): Response | undefined {
    const built = this.build();
    const doc = built.groupVersions.get(path);
    if (!doc) return undefined;
    // Only JSON: kubectl and client-go read v3 as JSON; the protobuf form gets 406 as an unknown type.
    if (!accepts(request.headers.get("accept"), "application", "json"))
      return new Response(null, { status: 406, headers: { Vary: "Accept" } });
    const hash = new URL(request.url).searchParams.get("hash");
    if (hash && hash !== doc.etag) {
      return new Response(null, { status: 301, headers: { Location: `/openapi/v3/${path}?hash=${doc.etag}`, Vary: "Accept" } });
    }
    const response = serve(request, doc, "application/json", built.lastModified);
    response.headers.set("Vary", "Accept");
    if (hash) {
      // The URL names this content for ever: clients may cache it without asking again.
      response.headers.set("Cache-Control", "public, immutable");
      response.headers.set("Expires", new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
    }
    return response;
  }

  /** GET /openapi/v2: Swagger 2.0, in JSON or in the gnostic protobuf form client-go asks for. */
  v2(request: Request): Response {
    const built = this.build();
    const accept = request.headers.get("accept");
    const protobuf = [V2_PROTOBUF_ASKED, V2_PROTOBUF.slice("application/".length)].some((subtype) =>
      accepts(accept, "application", subtype, false),
    );
    if (protobuf && !accepts(accept, "application", "json", false)) {
      built.v2Protobuf ??= { text: swaggerToProtobuf(JSON.parse(built.v2.text as string)), etag: built.v2.etag };
      return serve(request, built.v2Protobuf, V2_PROTOBUF, built.lastModified);
    }
    if (!accepts(accept, "application", "json")) return new Response(null, { status: 406 });
    return serve(request, built.v2, "application/json", built.lastModified);
  }
}

/** Whether an Accept header admits type/subtype (`*` wildcards count unless `wildcards` is false). */
function accepts(header: string | null, type: string, subtype: string, wildcards = true): boolean {
  if (!header) return wildcards;
  return header.split(",").some((clause) => {
    const [range = ""] = clause.trim().split(";");
    const [t, s] = range.trim().toLowerCase().split("/");
    if (t === type && s === subtype) return true;
    return wildcards && (t === "*" || t === type) && (s === "*" || (t === type && s === subtype));
  });
}

/** The document with its ETag; 304 when the client already has it (Go's http.ServeContent). */
function serve(request: Request, doc: Document, contentType: string, lastModified: string): Response {
  const etag = `"${doc.etag}"`;
  const headers = { ETag: etag, "Last-Modified": lastModified };
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch && (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag))) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(doc.text, { status: 200, headers: { ...headers, "Content-Type": contentType } });
}
