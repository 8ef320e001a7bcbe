// Path elements of field sets, as structured-merge-diff names them (fieldpath/element.go,
// serialize-pe.go): a struct or map member (`f:`), a list item by its keys (`k:`), a set item by its
// value (`v:`), a list item by position (`i:`). Their order and text forms match Go's byte for byte,
// because fieldsV1 is compared and stored as Kubernetes writes it.

import { compareUtf8 as compareStrings, goQuote } from "@orch/machinery";

export { compareStrings };

/** Key and value elements carry their serialized form (`id`), made once: it names them in every set. */
export type PathElement =
  | { readonly field: string }
  | { readonly key: readonly KeyField[]; readonly id: string }
  | { readonly value: unknown; readonly id: string }
  | { readonly index: number };

/** One key member of a list-map item; an element's keys are sorted by name. */
export type KeyField = readonly [name: string, value: unknown];

export type Path = readonly PathElement[];

export const fieldElement = (field: string): PathElement => ({ field });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Go's json.Marshal of a decoded JSON value: map keys sorted, HTML characters escaped. */
export function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort(compareStrings);
    return `{${keys.map((k) => `${goJsonString(k)}:${goJson(value[k])}`).join(",")}}`;
  }
  if (typeof value === "string") return goJsonString(value);
  return JSON.stringify(value ?? null);
}

function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The text of an element in fieldsV1 (`f:name`, `k:{"name":"web"}`, `v:"x"`, `i:0`); also its identity. */
export function serializeElement(pe: PathElement): string {
  if ("field" in pe) return `f:${pe.field}`;
  if ("index" in pe) return `i:${pe.index}`;
  return pe.id;
}

export class PathElementError extends Error {}

/** fieldpath.DeserializePathElement. */
export function deserializeElement(text: string): PathElement {
  if (text.length < 2) throw new PathElementError(`key must be 2 characters long: ${text}`);
  if (text[1] !== ":") throw new PathElementError(`missing colon: ${text}`);
  const body = text.slice(2);
  switch (text[0]) {
    case "f":
      return { field: body };
    case "v":
      return valueElement(parseJson(body));
    case "k": {
      const parsed = parseJson(body);
      if (!isObject(parsed)) throw new PathElementError(`key is not a JSON object: ${text}`);
      return keyElement(Object.entries(parsed));
    }
    case "i": {
      if (!/^[+-]?\d+$/.test(body)) throw new PathElementError(`strconv.Atoi: parsing ${JSON.stringify(body)}: invalid syntax`);
      return { index: Number(body) };
    }
    default:
      throw new PathElementError("unknown path element type");
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PathElementError((e as Error).message);
  }
}

export function keyElement(fields: readonly KeyField[]): PathElement {
  const key = [...fields].sort((a, b) => compareStrings(a[0], b[0]));
  return { key, id: `k:{${key.map(([n, v]) => `${goJsonString(n)}:${goJson(v)}`).join(",")}}` };
}

export const valueElement = (value: unknown): PathElement => ({ value, id: `v:${goJson(value)}` });

const elementRank = (pe: PathElement) => ("field" in pe ? 0 : "key" in pe ? 1 : "value" in pe ? 2 : 3);

/** PathElement.Compare: fields, then keys, then values, then indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  const ra = elementRank(a);
  const rb = elementRank(b);
  if (ra !== rb) return ra - rb;
  if ("field" in a && "field" in b) return compareStrings(a.field, b.field);
  if ("key" in a && "key" in b) return compareKeys(a.key, b.key);
  if ("value" in a && "value" in b) return compareValues(a.value, b.value);
  if ("index" in a && "index" in b) return Math.sign(a.index - b.index);
  return 0;
}

function compareKeys(a: readonly KeyField[], b: readonly KeyField[]): number {
  for (let i = 0; ; i++) {
    if (i >= a.length && i >= b.length) return 0;
    if (i >= a.length) return -1;
    if (i >= b.length) return 1;
    const c = compareStrings(a[i]![0], b[i]![0]) || compareValues(a[i]![1], b[i]![1]);
    if (c !== 0) return c;
  }
}

/** value.Compare: a total order over JSON values — numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) =>
    typeof v === "number" ? 0 : typeof v === "string" ? 1 : typeof v === "boolean" ? 2 : Array.isArray(v) ? 3 : isObject(v) ? 4 : 5;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === "number" && typeof b === "number") return Math.sign(a - b);
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; ; i++) {
      if (i >= a.length && i >= b.length) return 0;
      if (i >= a.length) return -1;
      if (i >= b.length) return 1;
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).sort(compareStrings);
    const kb = Object.keys(b).sort(compareStrings);
    for (let i = 0; ; i++) {
      if (i >= ka.length && i >= kb.length) return 0;
      if (i >= ka.length) return -1;
      if (i >= kb.length) return 1;
      const c = compareStrings(ka[i]!, kb[i]!) || compareValues(a[ka[i]!], b[kb[i]!]);
      if (c !== 0) return c;
    }
  }
  return 0;
}

/** value.ToString, as conflict messages print key and set values. */
function valueText(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return goQuote(v);
  if (Array.isArray(v)) return `[${v.map(valueText).join(",")}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort(compareStrings)
      .map((k) => `${k}=${valueText(v[k])}`)
      .join(",")}}`;
  }
  return String(v);
}

/** PathElement.String: `.name`, `[name="web"]`, `[="x"]`, `[0]`. */
export function elementText(pe: PathElement): string {
  if ("field" in pe) return `.${pe.field}`;
  if ("key" in pe) return `[${pe.key.map(([n, v]) => `${n}=${valueText(v)}`).join(",")}]`;
  if ("value" in pe) return `[=${valueText(pe.value)}]`;
  return `[${pe.index}]`;
}

/** Path.String: `.spec.template.spec.containers[name="web"].image`. */
export const pathText = (path: Path): string => path.map(elementText).join("");
