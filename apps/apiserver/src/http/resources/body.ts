// Request bodies: kubectl's typed requests arrive as protobuf, everything else as JSON or YAML.
import { errors } from "@orch/machinery";
import { PROTOBUF_CONTENT_TYPE, UnsupportedProtobufKindError, decodeKubernetesProtobuf } from "@orch/machinery/protobuf";
import type { KindDefinition } from "@orch/registry";
import { parseBody, parseMediaType } from "../negotiation.js";
import type { IncomingRequest } from "./request.js";

const SUPPORTED_BODY_TYPES = ["application/json", "application/yaml", PROTOBUF_CONTENT_TYPE];

/** Stateless between calls (no streaming): one for every request. */
const utf8 = new TextDecoder();

export const readText = async (req: IncomingRequest) => utf8.decode(await req.readBody());

/** The body as a JSON value (with the duplicate fields JSON and YAML decoding found). */
export async function readObjectBody(req: IncomingRequest, kind: KindDefinition) {
  return (await objectBodyReader(req, kind))();
}

/** Reads the body once; each call of the answer decodes it afresh (a write's retry needs a body nothing changed yet). */
export async function objectBodyReader(req: IncomingRequest, kind: KindDefinition) {
  const type = parseMediaType(req.headers.get("content-type") ?? "application/json").type;
  if (type === PROTOBUF_CONTENT_TYPE) {
    const bytes = await req.readBody();
    return () => decodeProtobuf(bytes);
  }
  if (!["application/json", "application/yaml", "text/yaml", ""].includes(type)) {
    throw errors.unsupportedMediaType(SUPPORTED_BODY_TYPES);
  }
  const text = await readText(req);
  return () => {
    try {
      return parseBody(text, type);
    } catch (e) {
      throw errors.badRequest(
        `the object provided is unrecognized (must be of type ${kind.kind}): ${(e as Error).message} (${summary(text)})`,
      );
    }
  };
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
