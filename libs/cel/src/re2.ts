// Regular expressions as Go's regexp package has them (RE2 syntax, linear time), for schema `pattern`s
// and CEL's matches()/find()/findAll(). re2js is a port of RE2/J, itself a port of Go's regexp: the same
// syntax ((?i), (?s), \z, [[:alpha:]], \pL), the same refusals (backreferences, lookaround) and the same
// parse error texts ("error parsing regexp: missing closing ]: `[a`"). JavaScript's RegExp is never used
// as a fallback: it would silently change what a pattern means.
import { RE2JS } from "re2js";

export type CompiledRegexp = { ok: true; regexp: RE2JS } | { ok: false; message: string };

/** Compiled patterns by source: real schemas repeat a handful of patterns on every object. */
const cache = new Map<string, CompiledRegexp>();
const CACHE_LIMIT = 4096;

/** Compiles `pattern` as Go's regexp.Compile does; the error is Go's message. */
export function compileRegexp(pattern: string): CompiledRegexp {
  const known = cache.get(pattern);
  if (known) return known;
  let compiled: CompiledRegexp;
  try {
    compiled = { ok: true, regexp: RE2JS.compile(pattern) };
  } catch (e) {
    compiled = { ok: false, message: (e as Error).message };
  }
  // Computed patterns (CEL matches() on data) must not grow the cache without bound.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

function mustCompile(pattern: string): RE2JS {
  const compiled = compileRegexp(pattern);
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.regexp;
}

/** regexp.MatchString: whether `pattern` matches anywhere in `text` (unanchored, as Go). */
export function regexpMatches(text: string, pattern: string): boolean {
  return mustCompile(pattern).test(text);
}

/** Regexp.FindString: the leftmost match, "" when there is none. */
export function regexpFind(text: string, pattern: string): string {
  const m = mustCompile(pattern).matcher(text);
  return m.find() ? (m.group() ?? "") : "";
}

/** Regexp.FindAllString(text, n): successive non-overlapping matches, all of them when n < 0. */
export function regexpFindAll(text: string, pattern: string, n = -1): string[] {
  if (n === 0) return [];
  const m = mustCompile(pattern).matcher(text);
  const out: string[] = [];
  let prevEnd = -1;
  while (m.find()) {
    // Go skips an empty match right after the previous match.
    if (m.start() === m.end() && m.start() === prevEnd) continue;
    out.push(m.group() ?? "");
    prevEnd = m.end();
    if (n > 0 && out.length >= n) break;
  }
  return out;
}
