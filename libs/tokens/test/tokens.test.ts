// Issuing and authenticating service account tokens, with a clock and objects under the test's control.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ObjectLookup, type ObjectMeta, ServiceAccountTokens, addSigningKey, ensureKeySet, loadKeySet } from "../src/index.js";

const ISSUER = "https://orch.test";
let dir: string;
let objects: Map<string, ObjectMeta & { metadata: { name: string; namespace: string } }>;
const lookup: ObjectLookup = { get: async (resource, ns, name) => objects.get(`${resource}/${ns}/${name}`) };

function put(resource: string, namespace: string, name: string, uid: string, extra: Record<string, unknown> = {}) {
  const o = { metadata: { name, namespace, uid, ...extra } };
  objects.set(`${resource}/${namespace}/${name}`, o);
  return o;
}

async function tokens(now = () => new Date()) {
  return new ServiceAccountTokens({ keys: await loadKeySet(dir), issuer: ISSUER, lookup, now });
}

const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, any>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "orch-tokens-"));
  await ensureKeySet(dir);
  objects = new Map();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("keys", () => {
  it("the first start writes sa-1.key (mode 0600); later starts reuse it", async () => {
    expect(await readdir(dir)).toEqual(["sa-1.key"]);
    expect((await stat(join(dir, "sa-1.key"))).mode & 0o777).toBe(0o600);
    const a = await ensureKeySet(dir);
    const b = await ensureKeySet(dir);
    expect(a.signing.kid).toBe(b.signing.kid);
    expect(a.signing.alg).toBe("ES256");
    // Kubernetes' key id: base64url SHA-256 of the DER public key, 43 characters.
    expect(a.signing.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("an RSA or P-384 key signs too (RS256, ES384), and discovery lists every algorithm", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    await writeFile(join(dir, "sa-2.key"), rsa.export({ type: "pkcs8", format: "pem" }));
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    const { token } = await t.issue({ serviceAccount: sa, expirationSeconds: 600 });
    expect(decodeProtectedHeader(token).alg).toBe("RS256");
    expect(await t.authenticate(token)).toHaveProperty("user");
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey;
    await writeFile(join(dir, "sa-3.key"), p384.export({ type: "sec1", format: "pem" }));
    const t3 = await tokens();
    expect(decodeProtectedHeader((await t3.issue({ serviceAccount: sa, expirationSeconds: 600 })).token).alg).toBe("ES384");
    expect(t3.openIdConfiguration("https://x/jwks").id_token_signing_alg_values_supported).toEqual(["ES256", "ES384", "RS256"]);
    expect(t3.jwks().keys.map((k) => k.kty)).toEqual(["EC", "RSA", "EC"]);
  });

  it("refuses a key that cannot sign tokens", async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    await writeFile(join(dir, "sa-5.key"), privateKey.export({ type: "pkcs8", format: "pem" }));
    await expect(loadKeySet(dir)).rejects.toThrow(/sa-5.key: only ECDSA/);
  });
});

describe("issuing", () => {
  it("writes Kubernetes' claims and header", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const issued = await (await tokens()).issue({ serviceAccount: sa, expirationSeconds: 3600, issuedAt: new Date(1_800_000_000_500) });
    const header = decodeProtectedHeader(issued.token);
    expect(header).toEqual({ alg: "ES256", kid: (await loadKeySet(dir)).signing.kid });
    const claims = payloadOf(issued.token);
    expect(Object.keys(claims)).toEqual(["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"]);
    expect(claims).toMatchObject({
      aud: [ISSUER],
      iat: 1_800_000_000,
      nbf: 1_800_000_000,
      exp: 1_800_003_600,
      iss: ISSUER,
      sub: "system:serviceaccount:ns:robot",
      "kubernetes.io": { namespace: "ns", serviceaccount: { name: "robot", uid: "sa-uid" } },
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(issued.expiresAt).toEqual(new Date(1_800_003_600_000));
  });

  it("records a bound pod (and its node) or secret", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const pod = { ...put("pods", "ns", "web", "pod-uid"), spec: { nodeName: "node-1" } };
    const secret = put("secrets", "ns", "s", "secret-uid");
    const t = await tokens();
    expect(payloadOf((await t.issue({ serviceAccount: sa, pod, expirationSeconds: 600 })).token)["kubernetes.io"]).toEqual({
      namespace: "ns",
      node: { name: "node-1" },
      pod: { name: "web", uid: "pod-uid" },
      serviceaccount: { name: "robot", uid: "sa-uid" },
    });
    expect(payloadOf((await t.issue({ serviceAccount: sa, secret, expirationSeconds: 600 })).token)["kubernetes.io"].secret).toEqual({
      name: "s",
      uid: "secret-uid",
    });
  });

  it("the JWKS alone verifies a token, with any JWT library", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    const { token } = await t.issue({ serviceAccount: sa, audiences: ["vault"], expirationSeconds: 600 });
    const { payload } = await jwtVerify(token, createLocalJWKSet(t.jwks()), { issuer: ISSUER, audience: "vault" });
    expect(payload.sub).toBe("system:serviceaccount:ns:robot");
    expect(t.jwks().keys[0]).toMatchObject({ use: "sig", kty: "EC", crv: "P-256", alg: "ES256" });
  });
});

describe("authenticating", () => {
  it("a valid token: the account's user, uid, groups and credential id", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    const { token, claims } = await t.issue({ serviceAccount: sa, expirationSeconds: 600 });
    expect(await t.authenticate(token)).toEqual({
      audiences: [ISSUER],
      user: {
        username: "system:serviceaccount:ns:robot",
        uid: "sa-uid",
        groups: ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"],
        extra: { "authentication.kubernetes.io/credential-id": [`JTI=${claims.jti}`] },
      },
    });
  });

  it("a pod-bound token names the pod and its node in extra", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const pod = { ...put("pods", "ns", "web", "pod-uid"), spec: { nodeName: "node-1" } };
    const t = await tokens();
    const r = await t.authenticate((await t.issue({ serviceAccount: sa, pod, expirationSeconds: 600 })).token);
    expect(r && "user" in r && r.user.extra).toMatchObject({
      "authentication.kubernetes.io/pod-name": ["web"],
      "authentication.kubernetes.io/pod-uid": ["pod-uid"],
      "authentication.kubernetes.io/node-name": ["node-1"],
    });
  });

  it("expiry and not-before, with go-jose's 60 s leeway", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    let clock = new Date("2030-01-01T00:00:00Z");
    const t = await tokens(() => clock);
    const { token } = await t.issue({ serviceAccount: sa, expirationSeconds: 600 });
    clock = new Date("2030-01-01T00:10:59Z");
    expect(await t.authenticate(token)).toHaveProperty("user");
    clock = new Date("2030-01-01T00:11:01Z");
    expect(await t.authenticate(token)).toEqual({ error: "service account token has expired" });
    clock = new Date("2029-12-31T23:58:59Z");
    expect(await t.authenticate(token)).toEqual({ error: "service account token is not valid yet" });
  });

  it("the audience must intersect the accepted ones", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    const { token } = await t.issue({ serviceAccount: sa, audiences: ["vault", "db"], expirationSeconds: 600 });
    expect(await t.authenticate(token)).toEqual({
      error: `token audiences ["vault" "db"] is invalid for the target audiences ["${ISSUER}"]`,
    });
    expect(await t.authenticate(token, ["db", "other"])).toMatchObject({ audiences: ["db"] });
  });

  it("a deleted account, an account recreated with another uid", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    const { token } = await t.issue({ serviceAccount: sa, expirationSeconds: 600 });
    objects.delete("serviceaccounts/ns/robot");
    expect(await t.authenticate(token)).toEqual({ error: 'serviceaccounts "robot" not found' });
    put("serviceaccounts", "ns", "robot", "other-uid");
    expect(await t.authenticate(token)).toEqual({ error: "service account UID (other-uid) does not match claim (sa-uid)" });
    put("serviceaccounts", "ns", "robot", "sa-uid", { deletionTimestamp: "2000-01-01T00:00:00Z" });
    expect(await t.authenticate(token)).toEqual({ error: "service account ns/robot has been deleted" });
  });

  it("a deleted or recreated bound object", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const secret = put("secrets", "ns", "s", "secret-uid");
    const pod = put("pods", "ns", "p", "pod-uid");
    const t = await tokens();
    const bySecret = (await t.issue({ serviceAccount: sa, secret, expirationSeconds: 600 })).token;
    const byPod = (await t.issue({ serviceAccount: sa, pod, expirationSeconds: 600 })).token;
    put("secrets", "ns", "s", "new-uid");
    expect(await t.authenticate(bySecret)).toEqual({
      error: "secret UID (new-uid) does not match service account secret ref claim (secret-uid)",
    });
    objects.delete("secrets/ns/s");
    expect(await t.authenticate(bySecret)).toEqual({ error: "service account token has been invalidated" });
    // A pod being deleted gracefully still vouches for its token until its deletion time has passed.
    put("pods", "ns", "p", "pod-uid", { deletionTimestamp: new Date(Date.now() + 30_000).toISOString() });
    expect(await t.authenticate(byPod)).toHaveProperty("user");
    objects.delete("pods/ns/p");
    expect(await t.authenticate(byPod)).toEqual({ error: "service account token has been invalidated" });
  });

  it("a foreign token is not ours; a forged one is refused", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const t = await tokens();
    expect(await t.authenticate("not-a-jwt")).toBeUndefined();
    const other = new ServiceAccountTokens({ keys: await loadKeySet(dir), issuer: "https://elsewhere", lookup });
    expect(await t.authenticate((await other.issue({ serviceAccount: sa, expirationSeconds: 600 })).token)).toBeUndefined();
    // Same issuer, another key: a forgery.
    const forgerDir = await mkdtemp(join(tmpdir(), "orch-forger-"));
    const forger = new ServiceAccountTokens({ keys: await ensureKeySet(forgerDir), issuer: ISSUER, lookup });
    const forged = (await forger.issue({ serviceAccount: sa, expirationSeconds: 600 })).token;
    await rm(forgerDir, { recursive: true });
    expect(await t.authenticate(forged)).toEqual({ error: "go-jose/go-jose: error in cryptographic primitive" });
  });

  it("after a rotation the new key signs and tokens of the old one still verify", async () => {
    const sa = put("serviceaccounts", "ns", "robot", "sa-uid");
    const before = await tokens();
    const old = (await before.issue({ serviceAccount: sa, expirationSeconds: 600 })).token;
    expect(await addSigningKey(dir)).toBe(join(dir, "sa-2.key"));
    const after = await tokens();
    const fresh = (await after.issue({ serviceAccount: sa, expirationSeconds: 600 })).token;
    const keys = await loadKeySet(dir);
    expect(decodeProtectedHeader(fresh).kid).toBe(keys.signing.kid);
    expect(decodeProtectedHeader(old).kid).not.toBe(keys.signing.kid);
    expect(await after.authenticate(old)).toHaveProperty("user");
    expect(after.jwks().keys.map((k) => k.kid)).toEqual(keys.verifying.map((k) => k.kid));
    expect(after.jwks().keys).toHaveLength(2);

    // Retiring the old private key but keeping its public half: old tokens still verify, and
    // removing that too ends them.
    const oldPublic = keys.verifying[1]!.publicKey.export({ type: "spki", format: "pem" });
    await rm(join(dir, "sa-1.key"));
    await writeFile(join(dir, "sa-1.pub"), oldPublic);
    expect(await (await tokens()).authenticate(old)).toHaveProperty("user");
    await rm(join(dir, "sa-1.pub"));
    expect(await (await tokens()).authenticate(old)).toEqual({ error: "go-jose/go-jose: error in cryptographic primitive" });
  });

  it("discovery names the issuer, the key set and the algorithms", async () => {
    const t = await tokens();
    expect(t.openIdConfiguration("https://api:6443/openid/v1/jwks")).toEqual({
      issuer: ISSUER,
      jwks_uri: "https://api:6443/openid/v1/jwks",
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256"],
    });
  });
});
