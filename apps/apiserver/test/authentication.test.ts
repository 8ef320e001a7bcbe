// Who is calling: client certificates and static bearer tokens, as a SelfSubjectReview reports them.
import { describe, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer({
  tokens: ["# scripts and bootstrap", 'script-token,alice,u-1,"dev,ops"', "plain-token,bob"],
});

const review = { apiVersion: "authentication.orch.io/v1", kind: "SelfSubjectReview" };
const reviews = "/apis/authentication.orch.io/v1/selfsubjectreviews";

describe("authentication", () => {
  it("a client certificate: user from CN, groups from O", async () => {
    const r = await t.api.post(reviews, review);
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo).toEqual({ username: "orch-admin", groups: ["system:masters", "system:authenticated"] });
  });

  it("a static token: user, uid and groups from the token file", async () => {
    const r = await t.api.withToken("script-token").post(reviews, review);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.orch.io/v1",
      status: { userInfo: { username: "alice", uid: "u-1", groups: ["dev", "ops", "system:authenticated"] } },
    });
    const plain = await t.api.withToken("plain-token").post(reviews, review);
    expect(plain.body.status.userInfo).toEqual({ username: "bob", groups: ["system:authenticated"] });
  });

  it("an unknown token or no credentials → 401, health endpoints excepted", async () => {
    for (const client of [t.api.withToken("nope"), t.api.anonymous()]) {
      const r = await client.post(reviews, review);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Unauthorized", message: "Unauthorized", code: 401 });
    }
    expect((await t.api.anonymous().get("/readyz")).status).toBe(200);
  });

  it("reviews are answered, never stored", async () => {
    const r = await t.api.get(reviews);
    expect(r.status).toBe(405);
    const discovery = (await t.api.get("/apis/authentication.orch.io/v1")).body;
    expect(discovery.resources).toContainEqual(
      expect.objectContaining({ name: "selfsubjectreviews", kind: "SelfSubjectReview", namespaced: false, verbs: ["create"] }),
    );
  });
});
