// create, update, delete, deletecollection, and the create-only subresources (actions such as
// serviceaccounts/token).
import { errors, success } from "@orch/machinery";
import { objectBodyReader, readObjectBody } from "./body.js";
import { deleteOptions, listOptions, writeOptions } from "./options.js";
import { renderObject, renderWritten } from "./render.js";
import type { VerbHandler } from "./request.js";

export const create: VerbHandler = async ({ deps, req, kind, store, format, namespace, ok }) => {
  const options = writeOptions(req, "CreateOptions");
  const body = await readObjectBody(req, kind);
  if (kind.actionOn) {
    // The legacy `bindings` collection: the action of the object the body names.
    const target = deps.registry.lookup(kind.group, kind.version, kind.actionOn.plural);
    if (!target) throw errors.notFoundPath();
    const name = (body.value as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    const answer = await deps
      .storeFor(target)
      .act(namespace, typeof name === "string" ? name : "", kind.actionOn.action, body, req.ctx, options);
    return ok(201, answer);
  }
  const result = await store.create(namespace, body, req.ctx, options);
  return ok(result.code, renderWritten(kind, result, format));
};

export const update: VerbHandler = async ({ req, kind, store, format, namespace, ok }) => {
  const options = writeOptions(req, "UpdateOptions");
  const body = await objectBodyReader(req, kind);
  const decoded = store.decode(body(), req.ctx, options);
  // The first attempt takes the decoded body itself; a retry (the object changed meanwhile) decodes the
  // body again, since the attempt before changed what it took. (Its warnings repeat; the answer says each once.)
  let taken = false;
  const result = await store.update(namespace, req.info.name, req.info.subresource || undefined, req.ctx, options, () => {
    if (!taken) {
      taken = true;
      return decoded;
    }
    return store.decode(body(), req.ctx, options);
  });
  return ok(result.code, renderWritten(kind, result, format));
};

export const remove: VerbHandler = async ({ req, kind, store, format, namespace, ok }) => {
  const { options, dryRun } = await deleteOptions(req);
  const result = await store.delete(namespace, req.info.name, req.ctx, options, dryRun);
  return ok(result.code, result.body.kind === "Status" ? result.body : renderObject(kind, JSON.stringify(result.body), format));
};

export const deleteCollection: VerbHandler = async ({ req, kind, store, ok }) => {
  const { options, dryRun } = await deleteOptions(req);
  await store.deleteCollection(listOptions(req), req.ctx, options, dryRun);
  // The spec's answer (and Kubernetes' documented type) is a Status; the Go server happens to send the
  // deleted items instead, which no typed client reads.
  return ok(200, success({ ...(kind.group ? { group: kind.group } : {}), kind: kind.plural }));
};

/** A subresource that only creates (a TokenRequest, a review): the kind's action answers. */
export const act: VerbHandler = async ({ req, kind, store, ok }) => {
  const options = writeOptions(req, "CreateOptions");
  const { info, ctx } = req;
  const answer = await store.act(info.namespace, info.name, info.subresource, await readObjectBody(req, kind), ctx, options);
  return ok(201, answer);
};
