// Who is calling. For now: client certificates signed by the cluster CA (user = CN, groups = O).
import type { UserInfo } from "@orch/registry";
import type { TLSSocket } from "node:tls";

// A connection's certificate never changes, and reading it is costly: remember it per socket.
const bySocket = new WeakMap<TLSSocket, UserInfo | undefined>();

export function userFromClientCertificate(socket: TLSSocket | undefined): UserInfo | undefined {
  if (!socket) return undefined;
  if (bySocket.has(socket)) return bySocket.get(socket);
  const user = readClientCertificate(socket);
  bySocket.set(socket, user);
  return user;
}

function readClientCertificate(socket: TLSSocket): UserInfo | undefined {
  if (!socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  const subject = cert?.subject as { CN?: string | string[]; O?: string | string[] } | undefined;
  const cn = Array.isArray(subject?.CN) ? subject.CN[0] : subject?.CN;
  if (!cn) return undefined;
  const orgs = subject?.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
  return { username: cn, groups: [...orgs, "system:authenticated"] };
}
