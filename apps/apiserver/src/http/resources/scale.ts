// `/scale`: the object seen and changed as an autoscaling/v1 Scale (get, update, patch).
import { Scale, shapeOf } from "@orch/api";
import { readObjectBody } from "./body.js";
import { methodNotAllowed } from "./errors.js";
import { writeOptions } from "./options.js";
import { readPatch } from "./patch.js";
import type { VerbHandler } from "./request.js";

export const scale: VerbHandler = async ({ req, store, namespace, ok }) => {
  const { info, ctx } = req;
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
};
