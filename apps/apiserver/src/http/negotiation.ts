// Media types in and out: JSON and YAML bodies, JSON/YAML/Table responses, as Kubernetes negotiates them.
import { errors } from "@orch/machinery";
import { DecodeError, TooDeepError, decodeJson, decodeYaml, findDuplicateFields } from "@orch/machinery/serializer";
import { stringify as yamlStringify } from "yaml";

export const JSON_TYPE = "application/json";
export const YAML_TYPE = "application/yaml";
const ACCEPTED = [JSON_TYPE, YAML_TYPE, "application/vnd.kubernetes.protobuf"];

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseMediaType(text: string): MediaType {
  const [type = "", ...rest] = text.split(";").map((s) => s.trim());
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq > 0)
      params[p.slice(0, eq).trim().toLowerCase()] = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, "");
  }
  return { type: type.toLowerCase(), params };
}

/** What the client will get back: plain JSON/YAML, or a server-side transformation of it. */
export interface ResponseFormat {
  type: typeof JSON_TYPE | typeof YAML_TYPE;
  /** `Table` (meta.k8s.io/v1), `PartialObjectMetadata(List)`, or undefined for the object itself. */
  as?: "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList";
  includeObject?: string;
}

/** Picks the first acceptable media range of the Accept header; 406 when none is. */
export function negotiate(accept: string | undefined, includeObject?: string): ResponseFormat {
  if (!accept) return { type: JSON_TYPE };
  for (const range of accept.split(",")) {
    const m = parseMediaType(range);
    const json = m.type === JSON_TYPE || m.type === "*/*" || m.type === "application/*";
    const yaml = m.type === YAML_TYPE;
    if (!json && !yaml) continue;
    const type = yaml ? YAML_TYPE : JSON_TYPE;
    const as = m.params.as;
    if (!as) return { type };
    if (m.params.g === "meta.k8s.io" && (m.params.v === "v1" || m.params.v === "v1beta1")) {
      if (as === "Table") return { type, as, ...(includeObject ? { includeObject } : {}) };
      if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") return { type, as };
    }
  }
  throw errors.notAcceptable(ACCEPTED);
}

export function serialize(value: unknown, format: ResponseFormat, pretty: boolean): string {
  if (format.type === YAML_TYPE) return yamlStringify(value);
  return pretty ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value);
}

export interface ParsedBody {
  value: unknown;
  duplicates: string[];
}

/** Parses a JSON or YAML body; malformed or too deeply nested input is a 400 that names the problem. */
export function parseBody(text: string, contentType: string | undefined): ParsedBody {
  const type = parseMediaType(contentType ?? JSON_TYPE).type;
  const yaml = type === YAML_TYPE || type === "application/apply-patch+yaml" || type === "text/yaml";
  try {
    return yaml ? parseYamlBody(text) : { value: decodeJson(text), duplicates: findDuplicateFields(text) };
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    throw errors.badRequest(
      yaml ? `error converting YAML to JSON: ${e.message}` : `couldn't get version/kind; json parse error: ${e.message}`,
    );
  }
}

/**
 * JSON is YAML, and what kubectl sends as YAML (a server-side apply) is JSON: read as JSON first, ten
 * times faster; YAML's flow style (`{a: b}`) is not JSON and falls through to the YAML parser.
 */
function parseYamlBody(text: string): ParsedBody {
  if (looksLikeJson(text)) {
    try {
      return { value: decodeJson(text), duplicates: findDuplicateFields(text) };
    } catch (e) {
      if (!(e instanceof DecodeError) || e instanceof TooDeepError) throw e;
    }
  }
  return decodeYaml(text);
}

/** A JSON object or array, as far as its first character tells (YAML's flow collections start alike, and parse the same). */
function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === "{" || first === "[";
}
