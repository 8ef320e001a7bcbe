/** Kubernetes `Time`: RFC 3339 in UTC with second precision. */
export const rfc3339 = (d: Date = new Date()): string => `${d.toISOString().slice(0, 19)}Z`;
/** Kubernetes `MicroTime`: RFC 3339 with microseconds. */
export const rfc3339Micro = (d: Date = new Date()): string => `${d.toISOString().slice(0, 23)}000Z`;
