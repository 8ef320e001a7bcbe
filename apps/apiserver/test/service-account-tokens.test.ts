// Service account tokens over real HTTPS: TokenRequest, the token authenticator, TokenReview and OIDC
// discovery, each rule as Kubernetes has it.
import { ServiceAccountTokens, addSigningKey, loadKeySet } from "@orch/tokens";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Client, RFC3339, freshNamespace, secret, startTestServer, useTestServer } from "./harness.js";

const t = useTestServer({ tokens: ["script-token,alice,u-1,ops"] });

const GROUP = "authentication.orch.io";
const whoami = (client: Client) =>
  client.post(`/apis/${GROUP}/v1/selfsubjectreviews`, { apiVersion: `${GROUP}/v1`, kind: "SelfSubjectReview" });
const review = (token: string, audiences?: string[]) =>
  t.api.post(`/apis/${GROUP}/v1/tokenreviews`, {
    apiVersion: `${GROUP}/v1`,
    kind: "TokenReview",
    spec: { token, ...(audiences ? { audiences } : {}) },
  });
const tokenPath = (ns: string, sa: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`;
const request = (spec: Record<string, unknown> = {}) => ({ apiVersion: `${GROUP}/v1`, kind: "TokenRequest", spec });

async function account(ns: string, name = "robot"): Promise<{ uid: string }> {
  const r = await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } });
  expect(r.status).toBe(201);
  return { uid: r.body.metadata.uid };
}

async function token(ns: string, name = "robot", spec: Record<string, unknown> = {}): Promise<string> {
  const r = await t.api.post(tokenPath(ns, name), request(spec));
  expect(r.status, r.text).toBe(201);
  return r.body.status.token as string;
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as Record<string, any>;

describe("TokenRequest", () => {
  it("issues a token for the apiserver's audience, one hour by default, and echoes the request", async () => {
    const ns = await freshNamespace(t.api);
    const { uid } = await account(ns);
    const before = Math.floor(Date.now() / 1000);
    const r = await t.api.post(tokenPath(ns, "robot"), request());
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: "TokenRequest",
      apiVersion: `${GROUP}/v1`,
      metadata: { name: "robot", namespace: ns },
      spec: { audiences: [t.server.url], expirationSeconds: 3600, boundObjectRef: null },
    });
    expect(r.body.metadata.creationTimestamp).toMatch(RFC3339);
    const claims = claimsOf(r.body.status.token);
    // The reported expiry is the token's.
    expect(r.body.status.expirationTimestamp).toBe(new Date(claims.exp * 1000).toISOString().replace(".000Z", "Z"));
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims).toMatchObject({
      iss: t.server.url,
      sub: `system:serviceaccount:${ns}:robot`,
      aud: [t.server.url],
      "kubernetes.io": { namespace: ns, serviceaccount: { name: "robot", uid } },
    });
  });

  it("the token authenticates as the service account", async () => {
    const ns = await freshNamespace(t.api);
    const { uid } = await account(ns);
    const jwt = await token(ns);
    const me = await whoami(t.api.withToken(jwt));
    expect(me.status).toBe(201);
    expect(me.body.status.userInfo).toEqual({
      username: `system:serviceaccount:${ns}:robot`,
      uid,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
      extra: { "authentication.orch.io/credential-id": [`JTI=${claimsOf(jwt).jti}`] },
    });
    // It acts as the account: denied until a RoleBinding grants the account something.
    expect((await t.api.withToken(jwt).get(`/api/v1/namespaces/${ns}/serviceaccounts`)).status).toBe(403);
    const rbac = "rbac.authorization.orch.io";
    const binding = await t.api.post(`/apis/${rbac}/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name: "robot-view" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "robot" }],
    });
    expect(binding.status).toBe(201);
    expect((await t.api.withToken(jwt).get(`/api/v1/namespaces/${ns}/serviceaccounts`)).status).toBe(200);
  });

  it("expirationSeconds: at least 10 minutes (422), capped at the configured maximum with a warning", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const short = await t.api.post(tokenPath(ns, "robot"), request({ expirationSeconds: 60 }));
    expect(short.status).toBe(422);
    expect(short.body).toMatchObject({
      reason: "Invalid",
      message: `TokenRequest.${GROUP} "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`,
      details: { name: "", group: GROUP, kind: "TokenRequest", causes: [{ reason: "FieldValueInvalid", field: "spec.expirationSeconds" }] },
    });
    const long = await t.api.post(tokenPath(ns, "robot"), request({ expirationSeconds: 10 * 86_400 }));
    expect(long.status).toBe(201);
    expect(long.warnings).toEqual(["requested expiration of 864000 seconds shortened to 86400 seconds"]);
    expect(long.body.spec.expirationSeconds).toBe(86_400);
    const claims = claimsOf(long.body.status.token);
    expect(claims.exp - claims.iat).toBe(86_400);
    expect(Date.parse(long.body.status.expirationTimestamp) / 1000).toBe(claims.exp);
  });

  it("the account must exist; the body's name and namespace must match the path", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const missing = await t.api.post(tokenPath(ns, "nobody"), request());
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('serviceaccounts "nobody" not found');
    const other = await t.api.post(tokenPath(ns, "robot"), { ...request(), metadata: { name: "else" } });
    expect(other.status).toBe(422);
    expect(other.body.message).toBe(
      `TokenRequest.${GROUP} "robot" is invalid: metadata.name: Invalid value: "else": must match the service account name if specified`,
    );
  });

  it("binds to a Pod or Secret that exists, with the uid given", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const s = await t.api.post(`/api/v1/namespaces/${ns}/secrets`, secret("bound"));
    const ref = { kind: "Secret", apiVersion: "v1", name: "bound", uid: s.body.metadata.uid };
    const bound = await t.api.post(tokenPath(ns, "robot"), request({ boundObjectRef: ref }));
    expect(bound.status).toBe(201);
    expect(bound.body.spec.boundObjectRef).toEqual(ref);
    expect(claimsOf(bound.body.status.token)["kubernetes.io"].secret).toEqual({ name: "bound", uid: ref.uid });

    const wrongUid = await t.api.post(tokenPath(ns, "robot"), request({ boundObjectRef: { ...ref, uid: "stale" } }));
    expect(wrongUid.status).toBe(409);
    expect(wrongUid.body.message).toBe(
      'Operation cannot be fulfilled on Secret "bound": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated',
    );
    const missing = await t.api.post(
      tokenPath(ns, "robot"),
      request({ boundObjectRef: { kind: "Secret", apiVersion: "v1", name: "gone" } }),
    );
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('secrets "gone" not found');
    const kind = await t.api.post(
      tokenPath(ns, "robot"),
      request({ boundObjectRef: { kind: "Deployment", apiVersion: "apps/v1", name: "d" } }),
    );
    expect(kind.status).toBe(400);
    expect(kind.body.message).toBe("cannot bind token to object of type apps/v1, Kind=Deployment");

    await account(ns, "other");
    const pod = await t.api.post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { serviceAccountName: "other", containers: [{ name: "c", image: "nginx" }] },
    });
    expect(pod.status).toBe(201);
    const podRef = { kind: "Pod", apiVersion: "v1", name: "p" };
    const mismatch = await t.api.post(tokenPath(ns, "robot"), request({ boundObjectRef: podRef }));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toBe('cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.');
  });
});

describe("the service account token authenticator", () => {
  it("a deleted account ends its tokens, and so does one recreated with another uid", async () => {
    const ns = await freshNamespace(t.api);
    const { uid } = await account(ns);
    const jwt = await token(ns);
    expect((await whoami(t.api.withToken(jwt))).status).toBe(201);
    expect((await t.api.delete(`/api/v1/namespaces/${ns}/serviceaccounts/robot`)).status).toBe(200);
    expect((await whoami(t.api.withToken(jwt))).status).toBe(401);
    expect((await review(jwt)).body.status.error).toBe('[invalid bearer token, serviceaccounts "robot" not found]');
    const again = await account(ns);
    const r = await whoami(t.api.withToken(jwt));
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ kind: "Status", reason: "Unauthorized", message: "Unauthorized", code: 401 });
    expect((await review(jwt)).body.status.error).toBe(
      `[invalid bearer token, service account UID (${again.uid}) does not match claim (${uid})]`,
    );
  });

  it("deleting the bound secret ends the token", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const s = await t.api.post(`/api/v1/namespaces/${ns}/secrets`, secret("bound"));
    const jwt = await token(ns, "robot", { boundObjectRef: { kind: "Secret", apiVersion: "v1", name: "bound", uid: s.body.metadata.uid } });
    expect((await whoami(t.api.withToken(jwt))).status).toBe(201);
    expect((await t.api.delete(`/api/v1/namespaces/${ns}/secrets/bound`)).status).toBe(200);
    expect((await whoami(t.api.withToken(jwt))).status).toBe(401);
    expect((await review(jwt)).body.status.error).toBe("[invalid bearer token, service account token has been invalidated]");
  });

  it("a pod-bound token names the pod in extra", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const pod = await t.api.post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { serviceAccountName: "robot", containers: [{ name: "c", image: "nginx" }] },
    });
    const jwt = await token(ns, "robot", { boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "p", uid: pod.body.metadata.uid } });
    expect((await whoami(t.api.withToken(jwt))).body.status.userInfo.extra).toMatchObject({
      "authentication.orch.io/pod-name": ["p"],
      "authentication.orch.io/pod-uid": [pod.body.metadata.uid],
    });
  });

  it("an expired token is refused (minted in the past with the server's own key)", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const robot = (await t.api.get(`/api/v1/namespaces/${ns}/serviceaccounts/robot`)).body;
    const issuer = new ServiceAccountTokens({
      keys: await loadKeySet(join(t.dataDir, "pki")),
      issuer: t.server.url,
      lookup: { get: async () => undefined },
    });
    const expired = await issuer.issue({ serviceAccount: robot, expirationSeconds: 600, issuedAt: new Date(Date.now() - 3600_000) });
    expect((await whoami(t.api.withToken(expired.token))).status).toBe(401);
    expect((await review(expired.token)).body.status).toEqual({
      user: {},
      error: "[invalid bearer token, service account token has expired]",
    });
    const fresh = await issuer.issue({ serviceAccount: robot, expirationSeconds: 600 });
    expect((await whoami(t.api.withToken(fresh.token))).status).toBe(201);
  });

  it("a token for another audience does not authenticate requests", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const jwt = await token(ns, "robot", { audiences: ["vault"] });
    expect((await whoami(t.api.withToken(jwt))).status).toBe(401);
    expect((await review(jwt)).body.status.error).toBe(
      `[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["${t.server.url}"]]`,
    );
  });
});

describe("TokenReview", () => {
  it("authenticated, user and audiences: the intersection of the review's and the token's", async () => {
    const ns = await freshNamespace(t.api);
    const { uid } = await account(ns);
    const jwt = await token(ns, "robot", { audiences: [t.server.url, "vault", "db"] });
    const r = await review(jwt, ["vault", "other"]);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: "TokenReview",
      apiVersion: `${GROUP}/v1`,
      metadata: { creationTimestamp: null },
      spec: { token: jwt, audiences: ["vault", "other"] },
      status: {
        authenticated: true,
        user: {
          username: `system:serviceaccount:${ns}:robot`,
          uid,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
        },
        audiences: ["vault"],
      },
    });
    expect(Object.keys(r.body.status.user.extra)).toEqual(["authentication.orch.io/credential-id"]);
  });

  it("without audiences: checked against the apiserver's, and none reported (valid for the apiserver)", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const r = await review(await token(ns));
    expect(r.body.status.authenticated).toBe(true);
    expect(r.body.status.audiences).toBeUndefined();
    // Naming the apiserver's audience reports it.
    expect((await review(await token(ns), [t.server.url])).body.status.audiences).toEqual([t.server.url]);
  });

  it("no shared audience, a foreign or garbled token: not authenticated, with an error", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const r = await review(await token(ns, "robot", { audiences: ["vault"] }), ["db"]);
    expect(r.body.status).toEqual({
      user: {},
      error: '[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["db"]]',
    });
    expect((await review("garbage")).body.status).toEqual({ user: {}, error: "invalid bearer token" });
  });

  it("static tokens review for the apiserver's audience only", async () => {
    expect((await review("script-token")).body.status).toEqual({
      authenticated: true,
      user: { username: "alice", uid: "u-1", groups: ["ops", "system:authenticated"] },
    });
    expect((await review("script-token", [t.server.url, "x"])).body.status.audiences).toEqual([t.server.url]);
    expect((await review("script-token", ["vault"])).body.status.authenticated).toBeUndefined();
  });

  it("a review needs a token (400); nothing is stored; discovery lists both endpoints", async () => {
    const r = await t.api.post(`/apis/${GROUP}/v1/tokenreviews`, { apiVersion: `${GROUP}/v1`, kind: "TokenReview", spec: {} });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("token is required for TokenReview in authentication");
    expect((await t.api.get(`/apis/${GROUP}/v1/tokenreviews`)).status).toBe(405);
    const auth = (await t.api.get(`/apis/${GROUP}/v1`)).body.resources;
    expect(auth).toContainEqual(
      expect.objectContaining({ name: "tokenreviews", kind: "TokenReview", namespaced: false, verbs: ["create"] }),
    );
    const core = (await t.api.get("/api/v1")).body.resources;
    expect(core).toContainEqual(
      expect.objectContaining({ name: "serviceaccounts/token", group: GROUP, version: "v1", kind: "TokenRequest", verbs: ["create"] }),
    );
  });
});

describe("OIDC discovery", () => {
  it("serves the configuration and key set to authenticated callers", async () => {
    const config = await t.api.get("/.well-known/openid-configuration");
    expect(config.status).toBe(200);
    expect(config.headers["content-type"]).toBe("application/json");
    expect(config.headers["cache-control"]).toBe("public, max-age=3600");
    expect(config.body).toEqual({
      issuer: t.server.url,
      jwks_uri: `${t.server.url}/openid/v1/jwks`,
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256"],
    });
    const jwks = await t.api.get("/openid/v1/jwks");
    expect(jwks.headers["content-type"]).toBe("application/jwk-set+json");
    expect((await t.api.anonymous().get("/openid/v1/jwks")).status).toBe(401);

    // A relying party verifies a token with the key set alone.
    const ns = await freshNamespace(t.api);
    await account(ns);
    const jwt = await token(ns, "robot", { audiences: ["vault"] });
    // Any token holder may read discovery.
    const set = JSON.parse((await t.api.withToken(await token(ns)).get("/openid/v1/jwks")).text);
    expect(set.keys[0]).toMatchObject({ use: "sig", kty: "EC", crv: "P-256", alg: "ES256", kid: decodeProtectedHeader(jwt).kid });
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(set), { issuer: config.body.issuer, audience: "vault" });
    expect(payload.sub).toBe(`system:serviceaccount:${ns}:robot`);
  });

  it("ORCH_SA_DISCOVERY_PUBLIC serves it to anyone; ORCH_SA_ISSUER and ORCH_API_AUDIENCES are used", async () => {
    const other = await startTestServer({
      serviceAccounts: { publicDiscovery: true, issuer: "https://issuer.example", audiences: ["api", "extra"] },
    });
    try {
      const config = await other.api.anonymous().get("/.well-known/openid-configuration");
      expect(config.status).toBe(200);
      expect(config.body.issuer).toBe("https://issuer.example");
      expect((await other.api.anonymous().get("/openid/v1/jwks")).status).toBe(200);
      await other.api.post("/api/v1/namespaces/default/serviceaccounts", {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "sa" },
      });
      const r = await other.api.post(tokenPath("default", "sa"), request());
      expect(r.body.spec.audiences).toEqual(["api", "extra"]);
      expect(claimsOf(r.body.status.token).iss).toBe("https://issuer.example");
      expect((await whoami(other.api.withToken(r.body.status.token))).status).toBe(201);
    } finally {
      await other.stop();
    }
  });
});

describe("key rotation", () => {
  it("after a new key and a restart, old tokens still verify and new ones carry the new kid", async () => {
    const ns = await freshNamespace(t.api);
    await account(ns);
    const old = await token(ns);
    const pki = join(t.dataDir, "pki");
    await addSigningKey(pki);
    await t.restart();
    const fresh = await token(ns);
    const keys = await loadKeySet(pki);
    expect(decodeProtectedHeader(fresh).kid).toBe(keys.signing.kid);
    expect(decodeProtectedHeader(old).kid).not.toBe(keys.signing.kid);
    expect((await whoami(t.api.withToken(old))).status).toBe(201);
    expect((await whoami(t.api.withToken(fresh))).status).toBe(201);
    const set = (await t.api.get("/openid/v1/jwks")).body as string;
    expect(JSON.parse(set).keys.map((k: { kid: string }) => k.kid)).toEqual(keys.verifying.map((k) => k.kid));
  });
});
