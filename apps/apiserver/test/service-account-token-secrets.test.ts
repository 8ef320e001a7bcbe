// Long-lived tokens in Secrets, as Kubernetes' token controller writes them: a Secret of type
// kubernetes.io/service-account-token gets a token, the cluster CA and its namespace; the token
// authenticates while the Secret holds it and its account exists.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshNamespace, sleep, useTestServer } from "./harness.js";

const t = useTestServer();

const GROUP = "authentication.orch.io";
const TYPE = "kubernetes.io/service-account-token";
const secretsPath = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;
const decode = (b64: string) => Buffer.from(b64, "base64").toString("utf8");

async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await sleep(50);
  }
  throw new Error("never happened");
}

async function review(token: string) {
  const r = await t.api.post(`/apis/${GROUP}/v1/tokenreviews`, { apiVersion: `${GROUP}/v1`, kind: "TokenReview", spec: { token } });
  expect(r.status, r.text).toBe(201);
  return r.body.status;
}

/** An account and a token Secret for it; resolves when the controller has filled the Secret. */
async function tokenSecret(ns: string, account = "robot", secret = "robot-token") {
  const sa = await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: account },
  });
  expect(sa.status).toBe(201);
  const created = await t.api.post(secretsPath(ns), {
    apiVersion: "v1",
    kind: "Secret",
    type: TYPE,
    metadata: { name: secret, annotations: { "orch.io/service-account.name": account } },
  });
  expect(created.status, created.text).toBe(201);
  const filled = await eventually(async () => {
    const r = await t.api.get(`${secretsPath(ns)}/${secret}`);
    return r.body.data?.token ? r.body : undefined;
  });
  return { account: sa.body, secret: filled, token: decode(filled.data.token) };
}

describe("service account token Secrets", () => {
  it("are filled with a token, the cluster CA and the namespace, and the token authenticates as the account", async () => {
    const ns = await freshNamespace(t.api);
    const { account, secret, token } = await tokenSecret(ns);
    expect(decode(secret.data["ca.crt"])).toBe(await readFile(join(t.dataDir, "pki", "ca.crt"), "utf8"));
    expect(decode(secret.data.namespace)).toBe(ns);
    expect(secret.metadata.annotations["orch.io/service-account.uid"]).toBe(account.metadata.uid);
    // Kubernetes' legacy token: its own issuer, the account's claims, no audience, no expiry.
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims).toEqual({
      iss: "kubernetes/serviceaccount",
      "kubernetes.io/serviceaccount/namespace": ns,
      "kubernetes.io/serviceaccount/secret.name": "robot-token",
      "kubernetes.io/serviceaccount/service-account.name": "robot",
      "kubernetes.io/serviceaccount/service-account.uid": account.metadata.uid,
      sub: `system:serviceaccount:${ns}:robot`,
    });

    expect(await review(token)).toMatchObject({
      authenticated: true,
      user: {
        username: `system:serviceaccount:${ns}:robot`,
        uid: account.metadata.uid,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
      },
    });
    const whoami = await t.api
      .withToken(token)
      .post(`/apis/${GROUP}/v1/selfsubjectreviews`, { apiVersion: `${GROUP}/v1`, kind: "SelfSubjectReview" });
    expect(whoami.body.status.userInfo.username).toBe(`system:serviceaccount:${ns}:robot`);
  });

  it("stop authenticating when the Secret's token changes, the Secret is marked invalid or deleted", async () => {
    const ns = await freshNamespace(t.api);
    const { token } = await tokenSecret(ns);
    const path = `${secretsPath(ns)}/robot-token`;

    await t.api.patch(path, { metadata: { labels: { "orch.io/legacy-token-invalid-since": "2026-01-01" } } });
    // The authenticator chain's aggregate, as Kubernetes reports it.
    expect((await review(token)).error).toBe(
      `[invalid bearer token, the token in secret ${ns}/robot-token for service account ${ns}/robot has been marked invalid. ` +
        "Use tokens from the TokenRequest API or manually created secret-based tokens, " +
        "or remove the 'orch.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token]",
    );
    await t.api.patch(path, { metadata: { labels: { "orch.io/legacy-token-invalid-since": null } } });
    expect((await review(token)).authenticated).toBe(true);

    await t.api.patch(path, { data: { token: Buffer.from("something else").toString("base64") } });
    expect((await review(token)).error).toBe("[invalid bearer token, token does not match server's copy]");

    expect((await t.api.delete(path)).status).toBe(200);
    expect((await review(token)).error).toBe("[invalid bearer token, token has been invalidated]");
  });

  it("are deleted with their account, or when they name an account that does not exist", async () => {
    const ns = await freshNamespace(t.api);
    const { token } = await tokenSecret(ns);
    expect((await t.api.delete(`/api/v1/namespaces/${ns}/serviceaccounts/robot`)).status).toBe(200);
    await eventually(async () => ((await t.api.get(`${secretsPath(ns)}/robot-token`)).status === 404 ? true : undefined));
    expect((await review(token)).authenticated).toBeFalsy();

    const orphan = await t.api.post(secretsPath(ns), {
      apiVersion: "v1",
      kind: "Secret",
      type: TYPE,
      metadata: { name: "orphan", annotations: { "orch.io/service-account.name": "nobody" } },
    });
    expect(orphan.status).toBe(201);
    await eventually(async () => ((await t.api.get(`${secretsPath(ns)}/orphan`)).status === 404 ? true : undefined));
  });

  it("are deleted when their account is replaced by a new one of the same name", async () => {
    const ns = await freshNamespace(t.api);
    const { token } = await tokenSecret(ns);
    await t.api.delete(`/api/v1/namespaces/${ns}/serviceaccounts/robot`);
    await t.api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "robot" } });
    await eventually(async () => ((await t.api.get(`${secretsPath(ns)}/robot-token`)).status === 404 ? true : undefined));
    expect((await review(token)).authenticated).toBeFalsy();
  });
});
