// Service account tokens under load: issuing them (TokenRequest), reviewing them (TokenReview: the
// signature, then the account read from storage), and requests authenticated by one instead of a
// client certificate.
import { Pool } from "undici";
import { type LoadResult, type Tls, runLoad } from "./load.js";

const GROUP = "authentication.orch.io";
const JSON_TYPE = { "content-type": "application/json" };

export interface TokenResults {
  issued: LoadResult;
  /** Each review a token not seen before: the ECDSA verification is paid every time. */
  reviewsFresh: LoadResult;
  /** The same token again and again, as a client reusing its token does: the signature is remembered. */
  reviewsSame: LoadResult;
  requests: LoadResult;
}

export async function tokenLoad(origin: string, tls: Tls, admin: Pool, total: number, concurrency: number): Promise<TokenResults> {
  const created = await admin.request({
    path: "/api/v1/namespaces/default/serviceaccounts",
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "bench-robot" } }),
  });
  await created.body.dump();
  // The account may read what the gets below read.
  const rbac = "rbac.authorization.orch.io";
  const bound = await admin.request({
    path: `/apis/${rbac}/v1/namespaces/default/rolebindings`,
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name: "bench-robot" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "bench-robot" }],
    }),
  });
  await bound.body.dump();

  const tokens: string[] = [];
  const tokenRequest = JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: "TokenRequest", spec: {} });
  const issued = await runLoad(
    total,
    concurrency,
    async (i) => {
      const r = await admin.request({
        path: "/api/v1/namespaces/default/serviceaccounts/bench-robot/token",
        method: "POST",
        headers: JSON_TYPE,
        body: tokenRequest,
      });
      tokens[i] = ((await r.body.json()) as { status: { token: string } }).status.token;
      return r.statusCode;
    },
    201,
  );

  const reviewOf = (token: string) => JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: "TokenReview", spec: { token } });
  const review = async (body: string) => {
    const r = await admin.request({ path: `/apis/${GROUP}/v1/tokenreviews`, method: "POST", headers: JSON_TYPE, body });
    const answer = (await r.body.json()) as { status?: { authenticated?: boolean } };
    // A review that does not authenticate counts as a failure.
    return answer.status?.authenticated ? r.statusCode : 0;
  };
  const reviewsFresh = await runLoad(total, concurrency, (i) => review(reviewOf(tokens[i]!)), 201);
  const token = tokens[0]!;
  const same = reviewOf(token);
  const reviewsSame = await runLoad(total, concurrency, () => review(same), 201);

  // No client certificate: the bearer token is the only credential.
  const bearer = new Pool(origin, { connections: concurrency, pipelining: 1, connect: { ca: tls.ca, rejectUnauthorized: true } });
  const requests = await runLoad(
    total,
    concurrency,
    async () => {
      const r = await bearer.request({
        path: "/api/v1/namespaces/default/serviceaccounts/bench-robot",
        method: "GET",
        headers: { authorization: `Bearer ${token}` },
      });
      await r.body.dump();
      return r.statusCode;
    },
    200,
  );
  await bearer.close();
  return { issued, reviewsFresh, reviewsSame, requests };
}
