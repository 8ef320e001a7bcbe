// Who is calling: each authenticator in turn, the first that recognises the request wins, as in
// Kubernetes' union authenticator. Client certificates signed by the cluster CA (user = CN,
// groups = O), then bearer tokens from the static token file.
import type { UserInfo } from "@orch/registry";
import { readFileSync } from "node:fs";
import type { TLSSocket } from "node:tls";

export type Authenticator = (request: { socket: TLSSocket | undefined; authorization: string | undefined }) =>
  | UserInfo
  | undefined;

/** Every authenticated user is also in this group. */
const AUTHENTICATED = "system:authenticated";

export function authenticatorChain(authenticators: Authenticator[]): Authenticator {
  return (request) => {
    for (const authenticate of authenticators) {
      const user = authenticate(request);
      if (user) return user;
    }
    return undefined;
  };
}

// A connection's certificate never changes, and reading it is costly: remember it per socket.
const bySocket = new WeakMap<TLSSocket, UserInfo | undefined>();

export const clientCertificates: Authenticator = ({ socket }) => {
  if (!socket) return undefined;
  if (bySocket.has(socket)) return bySocket.get(socket);
  const user = readClientCertificate(socket);
  bySocket.set(socket, user);
  return user;
};

function readClientCertificate(socket: TLSSocket): UserInfo | undefined {
  if (!socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  const subject = cert?.subject as { CN?: string | string[]; O?: string | string[] } | undefined;
  const cn = Array.isArray(subject?.CN) ? subject.CN[0] : subject?.CN;
  if (!cn) return undefined;
  const orgs = subject?.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
  return { username: cn, groups: [...orgs, AUTHENTICATED] };
}

/**
 * Kubernetes' --token-auth-file format: one `token,user,uid,"group1,group2"` per line (groups
 * optional, `#` comments). Read once at start, for scripts and bootstrap.
 */
export function staticTokens(path: string): Authenticator {
  const users = new Map<string, UserInfo>();
  readFileSync(path, "utf8")
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (!line.trim() || line.trimStart().startsWith("#")) return;
      const [token, username, uid, groups] = csvFields(line);
      if (!token || !username) throw new Error(`${path}:${i + 1}: a line needs at least a token and a user name`);
      const list = (groups ?? "").split(",").map((g) => g.trim()).filter(Boolean);
      users.set(token, { username, ...(uid ? { uid } : {}), groups: [...list, AUTHENTICATED] });
    });
  return ({ authorization }) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    return m ? users.get(m[1]!) : undefined;
  };
}

/** One CSV line: comma-separated, double quotes around fields that hold commas, `""` for a quote. */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") fields.push(field.trim()), (field = "");
    else field += c;
  }
  fields.push(field.trim());
  return fields;
}
