// One member of a JSON object's text, found without parsing it: an answer that carries part of a stored
// object as it is (a Table row's metadata, PartialObjectMetadata) splices that part's text instead of
// parsing the object and serializing the part again, which was most of a Table's cost.
import { stringEnd } from "./json.js";

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The text of the value of the top-level member `name` in `text`, a JSON object that JSON.parse accepts,
 * or undefined when it has no such member. When the key is repeated the last one counts, as in JSON.parse;
 * a key written with escapes (`"\u006dame"`) is not recognized (JSON.stringify never writes one), so a
 * caller falls back to parsing when this answers undefined.
 */
export function memberText(text: string, name: string): string | undefined {
  const key = JSON.stringify(name);
  let depth = 0;
  // Where the value of a matching member starts, while the scan is inside it; -1 otherwise.
  let start = -1;
  let found: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (depth === 1 && start < 0 && end + 1 - i === key.length && text.startsWith(key, i)) {
        // The name as a key (a colon follows), not as a value.
        let j = end + 1;
        while (isSpace(text.charCodeAt(j))) j++;
        if (text.charCodeAt(j) === COLON) {
          j++;
          while (isSpace(text.charCodeAt(j))) j++;
          start = j;
          i = j - 1;
          continue;
        }
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d || (c === COMMA && depth === 1)) {
      // The member's value ends where the top-level object's next member or its end begins.
      if (depth === 1 && start >= 0) {
        found = text.slice(start, i).trimEnd();
        start = -1;
      }
      if (c !== COMMA) depth--;
    }
  }
  return found;
}
