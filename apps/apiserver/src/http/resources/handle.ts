// The one request path for every kind: resolve the kind from the URL, then call the generic store.
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type ObjectHeader, Scale, shapeOf } from "@orch/api";
import {
  type Shape,
  StatusError,
  errors,
  success,
  failure,
  fieldError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  parseStrategicMergePatch,
  patchTypes,
} from "@orch/machinery";
import { TooDeepError, decodeJson } from "@orch/machinery/serializer";
import { PROTOBUF_CONTENT_TYPE, UnsupportedProtobufKindError, decodeKubernetesProtobuf } from "@orch/machinery/protobuf";
import { applyConfiguration, managerOrUserAgent, validateFieldManager } from "@orch/fieldmanager";
import {
  type DeleteOptions,
  type FieldValidation,
  type KindDefinition,
  type KindRegistry,
  type ListOptions,
  type RequestContext,
  type ResourceStore,
  StrictDecodingError,
  type WatchEvent,
  apiVersionOf,
  kindShape,
} from "@orch/registry";
import type { ResourceRequest } from "./request-info.js";
import { type ResponseFormat, negotiate, parseBody, parseMediaType } from "./negotiation.js";
import { respond, respondError } from "./respond.js";
import { toTable } from "./table.js";

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ResourceDeps {
  registry: KindRegistry;
  storeFor(kind: KindDefinition): ResourceStore;
  /** The annotation marking the end of initial watch events (profile-specific). */
  initialEventsAnnotation: string;
}

export interface IncomingRequest {
  info: ResourceRequest;
  query: URLSearchParams;
  headers: Headers;
  readBody(): Promise<Uint8Array>;
  ctx: RequestContext;
  /** Calls back when the client goes away (watch). */
  onClose(callback: () => void): void;
  /**
   * Starts a streamed response written straight to the connection (watch): no web stream and no
   * promise per chunk between an event and the socket. The handler then returns `RESPONSE_ALREADY_SENT`.
   */
  openStream(status: number, headers: Record<string, string>): ResponseStream;
}

export interface ResponseStream {
  /** False when the socket's buffer is full: wait for `onDrain`. */
  write(chunk: Uint8Array): boolean;
  onDrain(callback: () => void): void;
  end(): void;
}

const BOOL = (v: string | null) => (v === null ? undefined : v === "true" || v === "1");

function int(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  if (!/^-?\d+$/.test(v))
    throw errors.badRequest(`invalid value for ${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  return Number(v);
}

function listOptions(req: IncomingRequest): ListOptions {
  const q = req.query;
  return {
    namespace: req.info.namespace || undefined,
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
    limit: int(q, "limit"),
    continue: q.get("continue") ?? undefined,
    resourceVersion: q.get("resourceVersion") ?? undefined,
    resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
    sendInitialEvents: BOOL(q.get("sendInitialEvents")),
    allowWatchBookmarks: BOOL(q.get("allowWatchBookmarks")),
  };
}

/** Create, update and patch options; `leading` are the patch type's own errors, reported first. */
function writeOptions(req: IncomingRequest, kindName: string, leading: ReturnType<typeof validateFieldManager> = []) {
  const dryRun = req.query.getAll("dryRun");
  const fieldValidation = req.query.get("fieldValidation") ?? "";
  const fieldManager = req.query.get("fieldManager") ?? "";
  const errs = [...leading, ...validateFieldManager(fieldManager, "fieldManager")];
  if (dryRun.some((d) => d !== "All")) {
    errs.push({ type: "FieldValueNotSupported" as const, field: "dryRun", value: dryRun, detail: 'supported values: "All"' });
  }
  if (!["", "Ignore", "Warn", "Strict"].includes(fieldValidation)) {
    errs.push({
      type: "FieldValueNotSupported" as const,
      field: "fieldValidation",
      value: fieldValidation,
      detail: 'supported values: "", "Ignore", "Strict", "Warn"',
    });
  }
  if (errs.length > 0) throw errors.invalid({ group: "meta.k8s.io", kind: kindName }, "", errs);
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: (fieldValidation || "Warn") as FieldValidation,
    fieldManager: managerOrUserAgent(fieldManager, req.headers.get("user-agent") ?? undefined),
  };
}

const SUPPORTED_BODY_TYPES = ["application/json", "application/yaml", PROTOBUF_CONTENT_TYPE];

const readText = async (req: IncomingRequest) => new TextDecoder().decode(await req.readBody());

/** The body as a JSON value. kubectl's typed requests arrive as protobuf; everything else as JSON or YAML. */
async function readObjectBody(req: IncomingRequest, kind: KindDefinition) {
  const type = parseMediaType(req.headers.get("content-type") ?? "application/json").type;
  if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobuf(await req.readBody());
  if (!["application/json", "application/yaml", "text/yaml", ""].includes(type)) {
    throw errors.unsupportedMediaType(SUPPORTED_BODY_TYPES);
  }
  const text = await readText(req);
  try {
    return parseBody(text, type);
  } catch (e) {
    throw errors.badRequest(
      `the object provided is unrecognized (must be of type ${kind.kind}): ${(e as Error).message} (${summary(text)})`,
    );
  }
}

function decodeProtobuf(bytes: Uint8Array) {
  try {
    return { value: decodeKubernetesProtobuf(bytes), duplicates: [] };
  } catch (e) {
    if (e instanceof UnsupportedProtobufKindError) throw errors.unsupportedMediaType(["application/json", "application/yaml"]);
    throw errors.badRequest(`the object provided is unrecognized: ${(e as Error).message}`);
  }
}

const summary = (text: string) => (text.length === 0 ? "<empty>" : text.length <= 30 ? text : `${text.slice(0, 30)} ...`);

function parseObjects(items: { value: string }[]): ObjectHeader[] {
  return items.map((i) => JSON.parse(i.value) as ObjectHeader);
}

/** Renders one object for the negotiated format. */
function renderObject(kind: KindDefinition, text: string, format: ResponseFormat): unknown {
  if (!format.as) return text;
  const obj = JSON.parse(text) as ObjectHeader;
  if (format.as === "Table") return toTable(kind, [obj], { resourceVersion: obj.metadata.resourceVersion }, format.includeObject);
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: obj.metadata };
}

export async function handleResource(deps: ResourceDeps, req: IncomingRequest): Promise<Response> {
  const { info, query, ctx } = req;
  let format: ResponseFormat | undefined;
  try {
    format = negotiate(req.headers.get("accept") ?? undefined, query.get("includeObject") ?? undefined);
    // A group-version nobody serves falls through to the end of the chain, as in Kubernetes.
    if (!deps.registry.groups().get(info.group)?.has(info.version)) {
      return new Response("404 page not found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
    }
    const kind = deps.registry.lookup(info.group, info.version, info.resource);
    if (!kind) throw errors.notFoundPath();
    if (kind.deprecationWarning) ctx.warnings.push(kind.deprecationWarning);
    if (info.namespace && !kind.namespaced && info.resource !== "namespaces") throw errors.notFoundPath();
    const scale = info.subresource === "scale" && kind.scale !== undefined;
    const action = info.subresource ? kind.actions?.[info.subresource] : undefined;
    if (info.subresource && !kind.subresources[info.subresource] && !scale && !action) throw errors.notFoundPath();
    if (kind.namespaced && !info.namespace && info.name) throw errors.notFoundPath();
    if (!routed(kind, info)) throw methodNotAllowed();
    if (info.verb === "watch" && !kind.verbs.includes("watch")) {
      throw errors.methodNotSupported({ group: kind.group, resource: kind.plural }, info.verb);
    }
    const store = deps.storeFor(kind);
    if (scale) return await serveScale(req, store, format);
    if (action) {
      const options = writeOptions(req, "CreateOptions");
      const answer = await store.act(info.namespace, info.name, info.subresource, await readObjectBody(req, kind), ctx, options);
      return respond(201, answer, format, BOOL(query.get("pretty")) ?? false, ctx.warnings);
    }
    const pretty = BOOL(query.get("pretty")) ?? false;
    const ok = (code: number, body: unknown) => respond(code, body, format, pretty, ctx.warnings);
    const namespace = kind.namespaced ? info.namespace : "";

    switch (info.verb) {
      case "get": {
        const stored = await store.get(namespace, info.name);
        return ok(200, renderObject(kind, stored.value, format));
      }
      case "deletecollection": {
        const { options, dryRun } = await deleteOptions(req);
        await store.deleteCollection(listOptions(req), ctx, options, dryRun);
        // The spec's answer (and Kubernetes' documented type) is a Status; the Go server happens to send the
        // deleted items instead, which no typed client reads.
        return ok(200, success({ ...(kind.group ? { group: kind.group } : {}), kind: kind.plural }));
      }
      case "list": {
        const result = await store.list(listOptions(req));
        const listMeta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
        if (result.continue) listMeta.continue = result.continue;
        if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
        if (format.as === "Table") {
          return ok(200, toTable(kind, parseObjects(result.items), listMeta, format.includeObject));
        }
        if (format.as) {
          const items = parseObjects(result.items).map((o) => ({
            kind: "PartialObjectMetadata",
            apiVersion: "meta.k8s.io/v1",
            metadata: o.metadata,
          }));
          return ok(200, { kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", metadata: listMeta, items });
        }
        const head = JSON.stringify({ kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: listMeta });
        return ok(200, `${head.slice(0, -1)},"items":[${result.items.map((i) => i.value).join(",")}]}`);
      }
      case "watch":
        return await watch(deps, req, kind, store, format);
      case "create": {
        const options = writeOptions(req, "CreateOptions");
        const body = await readObjectBody(req, kind);
        const result = await store.create(namespace, body, ctx, options);
        return ok(result.code, renderObject(kind, JSON.stringify(result.object), format));
      }
      case "update": {
        const options = writeOptions(req, "UpdateOptions");
        const body = await readObjectBody(req, kind);
        const decoded = store.decode(body, ctx, options);
        const result = await store.update(namespace, info.name, info.subresource || undefined, ctx, options, () =>
          structuredClone(decoded),
        );
        return ok(result.code, renderObject(kind, JSON.stringify(result.object), format));
      }
      case "patch": {
        if (parseMediaType(req.headers.get("content-type") ?? "").type === patchTypes.apply) {
          const result = await serverSideApply(req, kind, store, namespace);
          return ok(result.code, renderObject(kind, JSON.stringify(result.object), format));
        }
        const options = writeOptions(req, "PatchOptions", applyOptionErrors(req, false));
        const patcher = await readPatch(req, kind, kindShape(kind));
        const result = await store.update(namespace, info.name, info.subresource || undefined, ctx, options, (current) => {
          if (!current) throw errors.notFound({ group: kind.group, resource: kind.plural }, info.name);
          const patched = patcher(current);
          try {
            return store.decode({ value: patched }, ctx, options);
          } catch (e) {
            if (e instanceof StrictDecodingError) throw strictPatchError(patched, e.problems);
            throw e;
          }
        });
        return ok(result.code, renderObject(kind, JSON.stringify(result.object), format));
      }
      case "delete": {
        const { options, dryRun } = await deleteOptions(req);
        const result = await store.delete(namespace, info.name, ctx, options, dryRun);
        const body = result.body.kind === "Status" ? result.body : renderObject(kind, JSON.stringify(result.body), format);
        return ok(result.code, body);
      }
    }
  } catch (e) {
    return respondError(e, format, ctx.warnings);
  }
}

/** What Kubernetes answers for a method it installed no route for. */
const methodNotAllowed = () => failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {});

/** Whether Kubernetes would have a route for this verb on this path: collection, object or subresource. */
function routed(kind: KindDefinition, info: ResourceRequest): boolean {
  // Across all namespaces a namespaced kind only lists and watches.
  if (kind.namespaced && !info.namespace && !["list", "watch"].includes(info.verb)) return false;
  if (info.subresource) {
    return kind.actions?.[info.subresource] ? info.verb === "create" : ["get", "update", "patch"].includes(info.verb);
  }
  switch (info.verb) {
    case "create":
      if (info.name) return false;
      break;
    case "update":
    case "patch":
      if (!info.name) return false;
      break;
    case "watch":
      // A kind without watch still routes GET on its collection; the handler says watch is unsupported.
      return kind.verbs.includes("list");
    default:
  }
  return kind.verbs.includes(info.verb);
}

/** ValidatePatchOptions' first rules: `force` only for apply, which needs a fieldManager. */
function applyOptionErrors(req: IncomingRequest, applying: boolean) {
  if (!applying) return req.query.has("force") ? [fieldError.forbidden("force", "may not be specified for non-apply patch")] : [];
  return req.query.get("fieldManager") ? [] : [fieldError.required("fieldManager", "is required for apply patch")];
}

/**
 * Server-side apply (`application/apply-patch+yaml`, YAML or JSON): the configuration is merged into the
 * object for its field manager — created when missing — with conflicts unless `force`.
 */
async function serverSideApply(req: IncomingRequest, kind: KindDefinition, store: ResourceStore, namespace: string) {
  const { info, ctx } = req;
  const options = { ...writeOptions(req, "PatchOptions", applyOptionErrors(req, true)), apply: true };
  const body = parseBody(await readText(req), patchTypes.apply);
  if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value)) {
    throw errors.badRequest("error decoding patch: expected an object");
  }
  const duplicates = (body.duplicates ?? []).map((f) => `duplicate field "${f}"`);
  if (duplicates.length > 0 && options.fieldValidation === "Strict") {
    throw errors.badRequest(`error strict decoding patch: ${duplicates.join(", ")}`);
  }
  if (options.fieldValidation === "Warn") ctx.warnings.push(...duplicates);
  const config = body.value as ObjectHeader;
  const subresource = info.subresource || undefined;
  const intent = {
    manager: options.fieldManager,
    apiVersion: apiVersionOf(kind),
    kind: kind.kind,
    ...(subresource ? { subresource } : {}),
    force: BOOL(req.query.get("force")) ?? false,
    hasStatusSubresource: kind.subresources.status !== undefined,
  };
  return store.update(namespace, info.name, subresource, ctx, options, (current) => {
    const applied = applyConfiguration(current, structuredClone(config), kindShape(kind), intent);
    return store.decode({ value: applied }, ctx, options);
  });
}

/** Strict field validation of a patch: 422 on the patched document, with an empty kind and name. */
function strictPatchError(patched: unknown, problems: readonly string[]): StatusError {
  const err = errors.invalid({ group: "", kind: "" }, "", [
    fieldError.invalid("patch", JSON.stringify(patched), `strict decoding error: ${problems.join(", ")}`),
  ]);
  const { name: _n, kind: _k, ...details } = err.status.details ?? {};
  err.status.details = details;
  return err;
}

/** Reads a patch body; the result applies it to a document of `shape` (the kind's, or a Scale's). */
async function readPatch(req: IncomingRequest, kind: KindDefinition, shape: Shape): Promise<(target: unknown) => unknown> {
  const type = parseMediaType(req.headers.get("content-type") ?? "").type;
  // Custom resources take no strategic merge patch (415), as Kubernetes' custom resource handler.
  const strategic = kind.custom ? undefined : (target: unknown, patch: unknown) => applyStrategicMergePatch(target, patch, shape);
  const apply =
    type === patchTypes.merge
      ? applyMergePatch
      : type === patchTypes.json
        ? applyJsonPatch
        : type === patchTypes.strategic
          ? strategic
          : undefined;
  if (!apply) {
    const accepted = kind.custom ? [patchTypes.json, patchTypes.merge] : [patchTypes.json, patchTypes.merge, patchTypes.strategic];
    throw errors.unsupportedMediaType([...accepted, patchTypes.apply]);
  }
  const text = await readText(req);
  let patch: unknown;
  try {
    patch = type === patchTypes.strategic ? parseStrategicMergePatch(text) : decodeJson(text);
  } catch (e) {
    if (e instanceof StatusError) throw e;
    if (e instanceof TooDeepError) throw errors.badRequest(e.message);
    throw errors.badRequest(type === patchTypes.json ? "invalid JSON patch" : "Invalid JSON Patch");
  }
  return (target) => {
    try {
      return apply(target, patch);
    } catch (e) {
      // Kubernetes discards the patch library's text: a generic 422 with empty details. A patch refused
      // for its size keeps the limit it met as its cause.
      if (e instanceof StatusError && e.code === 422 && !e.status.details?.causes) {
        throw failure(422, "Invalid", "the server rejected our request due to an error in our request", {});
      }
      throw e;
    }
  };
}

/** `/scale`: the object seen and changed as an autoscaling/v1 Scale (get, update, patch). */
async function serveScale(req: IncomingRequest, store: ResourceStore, format: ResponseFormat): Promise<Response> {
  const { info, ctx } = req;
  const namespace = store.kind.namespaced ? info.namespace : "";
  const pretty = BOOL(req.query.get("pretty")) ?? false;
  const ok = (code: number, body: unknown) => respond(code, body, format, pretty, ctx.warnings);
  switch (info.verb) {
    case "get":
      return ok(200, await store.getScale(namespace, info.name));
    case "update": {
      const options = writeOptions(req, "UpdateOptions");
      const body = (await readObjectBody(req, store.kind)).value;
      const result = await store.updateScale(namespace, info.name, ctx, options, () => body);
      return ok(result.code, result.object);
    }
    case "patch": {
      const options = writeOptions(req, "PatchOptions");
      const patcher = await readPatch(req, store.kind, shapeOf(Scale));
      const result = await store.updateScale(namespace, info.name, ctx, options, (current) => patcher(current));
      return ok(result.code, result.object);
    }
    default:
      throw methodNotAllowed();
  }
}

async function deleteOptions(req: IncomingRequest): Promise<{ options: DeleteOptions; dryRun: boolean }> {
  const q = req.query;
  const text = await readText(req);
  let body: Record<string, unknown> = {};
  if (text.trim()) {
    const parsed = parseBody(text, req.headers.get("content-type") ?? undefined).value;
    if (typeof parsed !== "object" || parsed === null) throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
    body = parsed as Record<string, unknown>;
    if (body.kind !== undefined && body.kind !== "DeleteOptions") {
      throw errors.badRequest("decoded object cannot be converted to DeleteOptions");
    }
  }
  const dryRunValues = (body.dryRun as string[] | undefined) ?? q.getAll("dryRun");
  if (dryRunValues.some((d) => d !== "All")) {
    throw errors.invalid({ group: "meta.k8s.io", kind: "DeleteOptions" }, "", [
      { type: "FieldValueNotSupported", field: "dryRun", value: dryRunValues, detail: 'supported values: "All"' },
    ]);
  }
  const options: DeleteOptions = {
    gracePeriodSeconds: (body.gracePeriodSeconds as number | undefined) ?? int(q, "gracePeriodSeconds"),
    propagationPolicy: (body.propagationPolicy as string | undefined) ?? q.get("propagationPolicy") ?? undefined,
    orphanDependents: (body.orphanDependents as boolean | undefined) ?? BOOL(q.get("orphanDependents")),
    preconditions: body.preconditions as DeleteOptions["preconditions"],
  };
  return { options, dryRun: dryRunValues.length > 0 };
}

const encoder = new TextEncoder();
/** The last line encoded: every watcher of a resource sends the same line for a change, so encode it once. */
let lastLine: { type: string; object: string; bytes: Uint8Array } | undefined;

function encodeLine(type: string, object: string): Uint8Array {
  if (lastLine && lastLine.object === object && lastLine.type === type) return lastLine.bytes;
  const bytes = encoder.encode(`{"type":"${type}","object":${object}}\n`);
  lastLine = { type, object, bytes };
  return bytes;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Streams watch events as JSON lines until the timeout, the client leaving, or an error. */
async function watch(
  deps: ResourceDeps,
  req: IncomingRequest,
  kind: KindDefinition,
  store: ResourceStore,
  format: ResponseFormat,
): Promise<Response> {
  const options = { ...listOptions(req), limit: undefined };
  const timeoutSeconds = int(req.query, "timeoutSeconds");
  const bookmarks = options.allowWatchBookmarks === true;
  const line = (type: string, object: unknown) => encodeLine(type, typeof object === "string" ? object : JSON.stringify(object));
  let watcher: Awaited<ReturnType<ResourceStore["watch"]>>;
  try {
    watcher = await store.watch(options, deps.initialEventsAnnotation);
  } catch (e) {
    // An expired start revision is reported inside a 200 stream, as Kubernetes does.
    const status = (e as { status?: { code?: number } }).status;
    if (status?.code === 410) {
      return new Response(line("ERROR", status), { status: 200, headers: { "Content-Type": "application/json" } });
    }
    throw e;
  }
  const render = (event: WatchEvent): unknown => {
    if (format.as === "Table" && event.type !== "BOOKMARK" && event.type !== "ERROR") {
      const obj = JSON.parse(event.object) as ObjectHeader;
      return toTable(kind, [obj], { resourceVersion: obj.metadata.resourceVersion }, format.includeObject);
    }
    return event.object;
  };
  const timeoutMs = (timeoutSeconds && timeoutSeconds > 0 ? timeoutSeconds : 1800 * (1 + Math.random())) * 1000;
  let lastRevision = 0;
  const timer = setTimeout(() => watcher.close(), timeoutMs);
  // Periodic bookmarks tell the client how far the stream has progressed even without changes.
  const ticker = setInterval(() => {
    if (!bookmarks) return;
    const revision = Math.max(lastRevision, store.currentRevision());
    watcher.push({
      type: "BOOKMARK",
      revision,
      object: JSON.stringify({ kind: kind.kind, apiVersion: apiVersionOf(kind), metadata: { resourceVersion: String(revision) } }),
    });
  }, 60_000);
  const stream = req.openStream(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
  let draining = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    clearInterval(ticker);
    watcher.close();
    if (watcher.endReason) stream.write(line("ERROR", errors.gone(`watch closed: ${watcher.endReason}`).status));
    stream.end();
  };
  // Writes what is queued, in one chunk; while the socket is full, events wait in the watcher's queue
  // (bounded: a watcher too far behind is closed) and leave together when it drains.
  const flush = () => {
    if (ended || draining) return;
    const lines: Uint8Array[] = [];
    for (const event of watcher.takeQueued()) {
      if (event.type === "BOOKMARK" && !bookmarks) continue;
      lastRevision = Math.max(lastRevision, event.revision);
      lines.push(line(event.type, render(event)));
    }
    if (lines.length > 0 && !stream.write(lines.length === 1 ? lines[0]! : concat(lines))) {
      draining = true;
      stream.onDrain(() => {
        draining = false;
        flush();
      });
    }
    if (watcher.isClosed && !draining) end();
  };
  req.onClose(() => {
    ended = true;
    clearTimeout(timer);
    clearInterval(ticker);
    watcher.close();
  });
  watcher.onQueued(flush);
  flush();
  // The response is on the connection already; this tells @hono/node-server to leave it alone.
  return RESPONSE_ALREADY_SENT;
}
