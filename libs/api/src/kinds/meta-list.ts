// `<Kind>List` objects: type metadata, list metadata and the items.
import * as v from "valibot";
import { ListMeta } from "../meta.js";
import { opt, str, type AnySchema } from "../schema.js";

/** The list kind of `item`, e.g. `listOf(Deployment)` for a DeploymentList. `items` is required. */
export const listOf = <S extends AnySchema>(item: S) =>
  v.object({
    apiVersion: opt(str()),
    kind: opt(str()),
    metadata: opt(ListMeta, {}),
    items: v.array(item),
  });
