// Who is calling: each authenticator in turn, the first that recognises the request wins, as in
// Kubernetes' union authenticator. A trusted front proxy's headers (when configured), client
// certificates signed by the cluster CA (user = CN, groups = O), then bearer tokens: the static token
// file, then service account tokens.
import type { UserInfo } from "@orch/registry";
import { goAggregate } from "@orch/machinery";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { TLSSocket } from "node:tls";

/** What an authenticator sees of a request. */
export interface Credentials {
  socket?: TLSSocket;
  /** The bearer token of the `Authorization` header, if any. */
  token?: string;
  /** The request headers by lowercase name, every value kept (request-header authentication reads them). */
  headers?: Record<string, string[] | undefined>;
  /**
   * The audiences the caller accepts (a TokenReview's `spec.audiences`); absent for a request to the
   * apiserver itself, which accepts its own.
   */
  audiences?: readonly string[];
}

/**
 * One authenticator's verdict: a user (with the audiences the credential was accepted for, when the
 * authenticator knows audiences), an error (a credential it recognised and refused), or nothing.
 */
export type Authentication = { user: UserInfo; audiences?: string[] } | { error: string } | undefined;

export type Authenticator = (credentials: Credentials) => Authentication | Promise<Authentication>;

/** The chain's verdict: the user, or why nobody recognised the credentials (Kubernetes' aggregate message). */
export type ChainResult = { user: UserInfo; audiences?: string[] } | { error: string | undefined };

/** Every authenticated user is also in this group. */
const AUTHENTICATED = "system:authenticated";

/** What Kubernetes' bearer-token authenticator reports for a token nobody accepted. */
const INVALID_BEARER_TOKEN = "invalid bearer token";

export function authenticatorChain(authenticators: Authenticator[]): (credentials: Credentials) => Promise<ChainResult> {
  return async (credentials) => {
    const errors: string[] = [];
    for (const authenticate of authenticators) {
      const result = await authenticate(credentials);
      if (!result) continue;
      if ("user" in result) return result;
      errors.push(result.error);
    }
    // A token nobody took is "invalid bearer token", followed by what the authenticators that knew it said.
    if (credentials.token !== undefined) return { error: goAggregate([INVALID_BEARER_TOKEN, ...errors]) };
    return { error: errors.length ? goAggregate(errors) : undefined };
  };
}

/** Kubernetes' bearertoken: `Bearer <token>`, scheme case-insensitive; an empty token is no token. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const parts = authorization.trim().split(" ");
  if (parts.length < 2 || parts[0]!.toLowerCase() !== "bearer" || !parts[1]) return undefined;
  return parts[1];
}

// A connection's certificate never changes, and reading it is costly: remember it per socket.
const bySocket = new WeakMap<TLSSocket, UserInfo | undefined>();

export const clientCertificates: Authenticator = ({ socket }) => {
  if (!socket) return undefined;
  if (bySocket.has(socket)) return wrap(bySocket.get(socket));
  const user = readClientCertificate(socket);
  bySocket.set(socket, user);
  return wrap(user);
};

const wrap = (user: UserInfo | undefined): Authentication => (user ? { user } : undefined);

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
 * An authenticator that knows nothing of audiences (static tokens) vouches only for the apiserver's
 * own: asked for others, it answers for their intersection with the apiserver's, or not at all
 * (Kubernetes' WrapAudienceAgnosticToken).
 */
export function audienceAgnostic(apiAudiences: readonly string[], authenticate: Authenticator): Authenticator {
  return async (credentials) => {
    if (!credentials.audiences) return authenticate(credentials);
    const audiences = apiAudiences.filter((a) => credentials.audiences!.includes(a));
    if (audiences.length === 0) return undefined;
    const result = await authenticate(credentials);
    return result && "user" in result ? { ...result, audiences } : result;
  };
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
      const list = (groups ?? "")
        .split(",")
        .map((g) => g.trim())
        .filter(Boolean);
      users.set(token, { username, ...(uid ? { uid } : {}), groups: [...list, AUTHENTICATED] });
    });
  return ({ token }) => wrap(token === undefined ? undefined : users.get(token));
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

/** Kubernetes' request-header settings (--requestheader-*), with its fixed header names. */
export interface RequestHeaderConfig {
  /** PEM of the CA that signs the front proxy's client certificate. */
  clientCaPem: string;
  /** Common names the proxy certificate may have; empty for any. */
  allowedNames: readonly string[];
}

const CLIENT_AUTH_USAGE = "1.3.6.1.5.5.7.3.2";
const EXTRA_HEADER_PREFIX = "x-remote-extra-";

/**
 * Request-header authentication (k8s.io/apiserver/pkg/authentication/request/headerrequest): a request
 * whose client certificate the front-proxy CA signed (with an allowed common name) is the user its
 * `X-Remote-User`, `X-Remote-Group` and `X-Remote-Extra-<key>` headers name. A proxy certificate that
 * does not verify is an error; a verified one without `X-Remote-User` leaves the request to the others.
 */
export function requestHeaders(config: RequestHeaderConfig): Authenticator {
  const ca = new X509Certificate(config.clientCaPem);
  const verified = new WeakMap<TLSSocket, string | undefined>();
  return ({ socket, headers }) => {
    if (!socket || !headers) return undefined;
    if (!verified.has(socket)) verified.set(socket, verifyProxy(socket, ca, config.allowedNames));
    const problem = verified.get(socket);
    if (problem === NOT_A_PROXY) return undefined;
    if (problem) return { error: problem };
    const username = (headers["x-remote-user"] ?? []).find((v) => v.trim() !== "");
    if (!username) return undefined;
    const groups = (headers["x-remote-group"] ?? []).filter((v) => v.trim() !== "");
    const extra: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(headers)) {
      if (!name.startsWith(EXTRA_HEADER_PREFIX)) continue;
      // Keys are case-insensitive and may be percent-encoded (spec 2.4): reported lowercase, unescaped.
      const key = unescapeKey(name.slice(EXTRA_HEADER_PREFIX.length).toLowerCase());
      const kept = (values ?? []).filter((v) => v.trim() !== "");
      if (kept.length) (extra[key] ??= []).push(...kept);
    }
    return {
      user: {
        username,
        groups: groups.includes(AUTHENTICATED) ? groups : [...groups, AUTHENTICATED],
        ...(Object.keys(extra).length ? { extra } : {}),
      },
    };
  };
}

/** Marks a connection whose certificate the front-proxy CA did not issue: not a proxy, nothing to report. */
const NOT_A_PROXY = "";

/** undefined for a good proxy certificate, NOT_A_PROXY, or why an issued one is refused. */
function verifyProxy(socket: TLSSocket, ca: X509Certificate, allowedNames: readonly string[]): string | undefined {
  const raw = socket.getPeerCertificate()?.raw;
  if (!raw) return NOT_A_PROXY;
  const cert = new X509Certificate(raw);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return NOT_A_PROXY;
  const now = Date.now();
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) return "x509: certificate has expired or is not yet valid";
  if (cert.keyUsage && !cert.keyUsage.includes(CLIENT_AUTH_USAGE)) {
    return "x509: certificate specifies an incompatible key usage";
  }
  const cn = /^CN=(.*)$/m.exec(cert.subject)?.[1] ?? "";
  if (allowedNames.length > 0 && !allowedNames.includes(cn)) {
    return `x509: subject with cn=${cn} is not in the allowed list`;
  }
  return undefined;
}

/** url.PathUnescape, keeping a malformed key as it came. */
function unescapeKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}
