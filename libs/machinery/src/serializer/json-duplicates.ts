// Duplicate object keys in a JSON document, reported like Kubernetes' strict decoder
// (sigs.k8s.io/json with DisallowDuplicateFields): the apiserver turns each into `duplicate field "<path>"`
// — a warning under fieldValidation=Warn, a 400 under Strict. Paths join keys with "." and add "[i]" for
// array elements: `metadata.name`, `spec.containers[0].image`, `[0].a` for an object inside a top-level
// array. Each path is reported once, in the order the second occurrence is met, at most 100 of them;
// a duplicate key is reported before the duplicates inside its own value. Keys compare after unescaping
// (`"a"` and `"\u0061"` are the same key), as Go decodes them.
//
// The text must already be valid JSON (JSON.parse accepted it): this is one pass that tracks only the
// container stack, so it allocates per key and per container, never per character.
import { goQuote } from "../values/go-format.js";
import { stringEnd } from "./json.js";

const OBJECT = 0;
const ARRAY = 1;
const maxReported = 100;

const QUOTE = 0x22;

/** Go replaces unpaired surrogates from `\uD800`-style escapes with U+FFFD; so must we, to compare alike. */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end);
  return raw.includes("\\") ? wellFormed(JSON.parse(`"${raw}"`) as string) : raw;
}

export function findDuplicateFields(jsonText: string): string[] {
  const reported: string[] = [];
  const seenPaths = new Set<string>();
  // One frame per open container: its kind, the current key or index, and the keys met so far.
  const kinds: number[] = [];
  const keys: string[] = [];
  const indexes: number[] = [];
  // Most objects have few keys: the first key stays in `keys`, a Set appears only from the second.
  const keyCounts: number[] = [];
  const keySets: (Set<string> | undefined)[] = [];
  let depth = -1;
  let expectKey = false;

  const pathTo = (key: string): string => {
    let p = "";
    for (let d = 0; d < depth; d++) {
      if (kinds[d] === ARRAY) p += `[${indexes[d]}]`;
      else p += d > 0 ? `.${keys[d]}` : keys[d];
    }
    return depth > 0 ? `${p}.${key}` : key;
  };

  const n = jsonText.length;
  let i = 0;
  while (i < n) {
    const c = jsonText.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(jsonText, i);
      if (expectKey) {
        const key = decodeKey(jsonText, i, end);
        const count = keyCounts[depth] ?? 0;
        let duplicate = false;
        if (count > 0) {
          let set = keySets[depth];
          // Created at the second key, when keys[depth] still holds the first.
          if (!set) keySets[depth] = set = new Set([keys[depth] ?? ""]);
          if (set.has(key)) duplicate = true;
          else set.add(key);
        }
        if (duplicate && reported.length < maxReported) {
          const path = pathTo(key);
          if (!seenPaths.has(path)) {
            seenPaths.add(path);
            reported.push(path);
          }
        }
        keyCounts[depth] = count + 1;
        keys[depth] = key;
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    switch (c) {
      case 0x7b: // {
        depth++;
        kinds[depth] = OBJECT;
        keyCounts[depth] = 0;
        keySets[depth] = undefined;
        expectKey = true;
        break;
      case 0x5b: // [
        depth++;
        kinds[depth] = ARRAY;
        indexes[depth] = 0;
        expectKey = false;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth--;
        expectKey = false;
        break;
      case 0x2c: // ,
        if (kinds[depth] === ARRAY) indexes[depth] = (indexes[depth] ?? 0) + 1;
        else expectKey = true;
        break;
      default:
        break;
    }
    i++;
  }
  return reported;
}

/** The text Kubernetes puts in the warning or error for one duplicate: `duplicate field "<path>"`. */
export const duplicateFieldMessage = (path: string): string => `duplicate field ${goQuote(path)}`;
