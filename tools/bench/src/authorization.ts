// Authorization overhead: gets by a service account that RBAC allows through a RoleBinding, and
// requests it denies, with many unrelated roles and bindings in the index (what a real cluster has).
import { Pool } from "undici";
import { type LoadResult, type Tls, runLoad } from "./load.js";

const RBAC = "rbac.authorization.orch.io";
const JSON_TYPE = { "content-type": "application/json" };

export interface AuthorizationResults {
  /** Gets allowed by a RoleBinding to `view`. */
  allowed: LoadResult;
  /** Lists of secrets, denied (403) after every binding was looked at. */
  denied: LoadResult;
  /** Unrelated bindings the authorizer had to walk past. */
  bindings: number;
}

export async function authorizationLoad(
  origin: string,
  tls: Tls,
  admin: Pool,
  total: number,
  concurrency: number,
  unrelated: number,
): Promise<AuthorizationResults> {
  const post = async (path: string, body: unknown) => {
    const r = await admin.request({ path, method: "POST", headers: JSON_TYPE, body: JSON.stringify(body) });
    await r.body.dump();
    if (r.statusCode !== 201) throw new Error(`POST ${path}: ${r.statusCode}`);
  };
  const binding = (kind: string, name: string, role: string, subject: unknown) => ({
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: role },
    subjects: [subject],
  });
  // Cluster-wide bindings are walked on every request; namespaced ones only in their namespace.
  for (let i = 0; i < unrelated; i++) {
    await post(
      `/apis/${RBAC}/v1/clusterrolebindings`,
      binding("ClusterRoleBinding", `bench-user-${i}`, "view", { kind: "User", apiGroup: RBAC, name: `user-${i}` }),
    );
    await post(
      `/apis/${RBAC}/v1/namespaces/default/rolebindings`,
      binding("RoleBinding", `bench-user-${i}`, "edit", { kind: "User", apiGroup: RBAC, name: `user-${i}` }),
    );
  }
  await post("/api/v1/namespaces/default/serviceaccounts", {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "bench-reader" },
  });
  await post(
    `/apis/${RBAC}/v1/namespaces/default/rolebindings`,
    binding("RoleBinding", "bench-reader", "view", { kind: "ServiceAccount", name: "bench-reader" }),
  );
  const issued = await admin.request({
    path: "/api/v1/namespaces/default/serviceaccounts/bench-reader/token",
    method: "POST",
    headers: JSON_TYPE,
    body: JSON.stringify({ apiVersion: "authentication.orch.io/v1", kind: "TokenRequest", spec: {} }),
  });
  const token = ((await issued.body.json()) as { status: { token: string } }).status.token;

  const reader = new Pool(origin, { connections: concurrency, pipelining: 1, connect: { ca: tls.ca, rejectUnauthorized: true } });
  const get = (path: string) => async () => {
    const r = await reader.request({ path, method: "GET", headers: { authorization: `Bearer ${token}` } });
    await r.body.dump();
    return r.statusCode;
  };
  const allowed = await runLoad(total, concurrency, get("/api/v1/namespaces/default/serviceaccounts/bench-reader"), 200);
  const denied = await runLoad(total, concurrency, get("/api/v1/namespaces/default/secrets"), 403);
  await reader.close();
  return { allowed, denied, bindings: 2 * unrelated };
}
