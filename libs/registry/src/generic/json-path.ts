// The simple JSON paths custom resources use for /scale and selectable fields: `.spec.replicas`,
// dotted member names only, no array notation.

const parts = (path: string) => path.replace(/^\./, "").split(".");

export function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const part of parts(path)) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Sets a member, creating the objects on the way. */
export function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const names = parts(path);
  let cur = obj;
  for (const part of names.slice(0, -1)) {
    const next = cur[part];
    if (next === null || typeof next !== "object" || Array.isArray(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[names[names.length - 1]!] = value;
}
