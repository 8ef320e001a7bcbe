// Flow control against the real apiserver, with 2 seats, 2 places in each user's queue and 2 watches
// per user (4 in all): a user flooding with requests the server cannot finish gets 429 + Retry-After
// while another user is still served; watches beyond the limits get 429; the X-Kubernetes-PF-* headers
// say how each request was classified. A request is held in its seat by its own body: the test sends
// half of it and the rest when it chooses, so nothing depends on how fast the server is.
import { eventually } from "@orch/testing";
import type { IncomingMessage } from "node:http";
import { readFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER } from "../src/flow-control/filter.js";
import { FLOW_SCHEMAS, PRIORITY_LEVELS } from "../src/flow-control/priority-levels.js";
import { type Client, type Reply, freshNamespace, useTestServer } from "./harness.js";

const t = useTestServer({
  tokens: ["alice-token,alice,u-alice", "bob-token,bob,u-bob", "carol-token,carol,u-carol"],
  flowControl: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 0, queueLengthLimit: 2, maxWatches: 4, maxWatchesPerUser: 2 },
});

const RBAC = "rbac.authorization.orch.io";
const clients = new Map<string, Client>();
/** One client per user, kept for the whole file. */
const user = (name: string): Client => {
  let client = clients.get(name);
  if (!client) clients.set(name, (client = t.api.withToken(`${name}-token`)));
  return client;
};
const [alice, bob] = [() => user("alice"), () => user("bob")];
afterAll(() => {
  for (const client of clients.values()) client.close();
});
const schemaUid = (name: string) => FLOW_SCHEMAS.find((s) => s.name === name)!.uid;

/** Lets alice, bob and carol do anything, so that only flow control stands in their way. */
async function grantEveryone(): Promise<void> {
  const binding = await t.api.post(`/apis/${RBAC}/v1/clusterrolebindings`, {
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name: "flow-control-test-users" },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "cluster-admin" },
    subjects: ["alice", "bob", "carol"].map((name) => ({ kind: "User", apiGroup: RBAC, name })),
  });
  expect(binding.status, binding.text).toBe(201);
}

/** A create whose body arrives in two halves: the request holds its seat until `finish`. */
function heldCreate(agent: Agent, token: string, path: string, name: string) {
  const body = JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name }, type: "Opaque", data: { key: "dmFsdWU=" } });
  const half = Math.floor(body.length / 2);
  let answered: IncomingMessage | undefined;
  const req = httpsRequest(new URL(path, t.server.url), {
    method: "POST",
    agent,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "Content-Length": String(body.length) },
  });
  const response = new Promise<{ status: number; headers: IncomingMessage["headers"]; text: string }>((resolve, reject) => {
    req.on("response", async (res) => {
      answered = res;
      let text = "";
      for await (const chunk of res) text += chunk;
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
    });
    // A rejected request is answered before its body is read and its connection closed: the rest of
    // the body may then fail to go out, which is not the test's concern.
    req.on("error", (e) => (answered ? undefined : reject(e)));
  });
  req.write(body.slice(0, half));
  return {
    get answered() {
      return answered !== undefined;
    },
    response,
    finish: () => req.end(body.slice(half)),
  };
}

function expectTooManyRequests(reply: Pick<Reply, "status" | "headers" | "body">, message: string): void {
  expect(reply.status).toBe(429);
  expect(reply.headers["retry-after"]).toBe("1");
  expect(reply.body).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "TooManyRequests", code: 429, message });
  expect(reply.body.details).toEqual({ retryAfterSeconds: 1 });
}

describe("concurrency", () => {
  it("a user flooding with requests it never finishes gets 429 + Retry-After; another user is still served", async () => {
    await grantEveryone();
    const ns = await freshNamespace(t.api, "fc");
    const path = `/api/v1/namespaces/${ns}/secrets`;
    const agent = new Agent({ ca: readFileSync(join(t.dataDir, "pki", "ca.crt")) });
    // 2 seats and 2 places in alice's queue: of 8 held creates, 4 stay, 4 are refused (which ones
    // depends on the order they arrive in).
    const flood = Array.from({ length: 8 }, (_, i) => heldCreate(agent, "alice-token", path, `flood-${i}`));
    await eventually("4 of alice's creates refused", () => flood.filter((f) => f.answered).length >= 4);
    const held = flood.filter((f) => !f.answered);
    const answers = await Promise.all(flood.filter((f) => f.answered).map((f) => f.response));
    expect(answers).toHaveLength(4);
    for (const answer of answers) {
      expectTooManyRequests({ ...answer, body: JSON.parse(answer.text) }, "Too many requests, please try again later.");
      expect(answer.headers[FLOW_SCHEMA_UID_HEADER.toLowerCase()]).toBe(schemaUid("global-default"));
      expect(answer.headers[PRIORITY_LEVEL_UID_HEADER.toLowerCase()]).toBe(PRIORITY_LEVELS.globalDefault.uid);
    }
    // Alice's queue is full: her next request is refused at once.
    expectTooManyRequests(await alice().get(path), "Too many requests, please try again later.");

    // Bob queues in his own queue, not behind alice's full one: of 3 requests sent together, 2 wait
    // (his queue's places) and 1 is refused, which also tells that the other 2 have arrived.
    const bobs = Array.from({ length: 3 }, () => {
      const reply = { value: undefined as Reply | undefined };
      return Object.assign(reply, {
        done: bob()
          .get(path)
          .then((r) => (reply.value = r)),
      });
    });
    await eventually("1 of bob's 3 requests answered", () => bobs.some((b) => b.value));
    const [bobRefused, ...bobWaiting] = [...bobs.filter((b) => b.value), ...bobs.filter((b) => !b.value)];
    expect(bobWaiting.every((b) => !b.value)).toBe(true);
    expectTooManyRequests(bobRefused!.value!, "Too many requests, please try again later.");
    // Alice's requests finish; the seats they free go to bob's waiting requests.
    for (const f of flood) f.finish();
    for (const b of bobWaiting) {
      const reply = await b.done;
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers[FLOW_SCHEMA_UID_HEADER.toLowerCase()]).toBe(schemaUid("global-default"));
    }
    expect((await Promise.all(held.map((f) => f.response))).map((r) => r.status)).toEqual([201, 201, 201, 201]);
    agent.destroy();
  });

  it("system:masters is exempt: its answers say so, and it is served whatever others do", async () => {
    const reply = await t.api.get("/api/v1/namespaces");
    expect(reply.status).toBe(200);
    expect(reply.headers[FLOW_SCHEMA_UID_HEADER.toLowerCase()]).toBe(schemaUid("exempt"));
    expect(reply.headers[PRIORITY_LEVEL_UID_HEADER.toLowerCase()]).toBe(PRIORITY_LEVELS.exempt.uid);
  });
});

describe("watches", () => {
  it("hold no seat once started; beyond 2 per user or 4 in all they get 429; exempt users are never refused", async () => {
    const path = "/api/v1/namespaces/default/secrets";
    const aliceWatches = [await alice().watch(path), await alice().watch(path)];
    expect(aliceWatches.map((w) => w.status)).toEqual([200, 200]);
    expect(aliceWatches[0]!.headers[FLOW_SCHEMA_UID_HEADER.toLowerCase()]).toBe(schemaUid("global-default"));
    const third = await alice().get(`${path}?watch=true`);
    expectTooManyRequests(third, "Too many watches, please try again later.");
    expect(third.headers[PRIORITY_LEVEL_UID_HEADER.toLowerCase()]).toBe(PRIORITY_LEVELS.globalDefault.uid);

    const bobWatches = [await bob().watch(path), await bob().watch(path)];
    expect(bobWatches.map((w) => w.status)).toEqual([200, 200]);
    // 4 watches open and 2 seats: a request still gets one, since a started watch holds none.
    expect((await user("carol").get(path)).status).toBe(200);
    expectTooManyRequests(await user("carol").get(`${path}?watch=true`), "Too many watches, please try again later.");
    const admin = await t.api.watch(path);
    expect(admin.status).toBe(200);

    // Closing watches gives their places back.
    aliceWatches[0]!.close();
    admin.close();
    const again = await eventually("alice watching again", async () => {
      const w = await alice().watch(path);
      if (w.status === 200) return w;
      w.close();
      return undefined;
    });
    for (const w of [again, aliceWatches[1]!, ...bobWatches]) w.close();
  });
});
