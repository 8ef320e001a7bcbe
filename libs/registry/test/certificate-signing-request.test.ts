// What the HTTP tests cannot vary: the caller. The requester fields come from whoever creates the
// request, with Go's omitempty for the empty ones.
import { namingProfile, type ObjectHeader } from "@orch/api";
import { describe, expect, it } from "vitest";
import type { RequestContext, UserInfo } from "../src/index.js";
import { certificateSigningRequests } from "../src/kinds/certificates/certificate-signing-request.js";

const profile = namingProfile("orch");
const kind = certificateSigningRequests(profile);
const ctx = (user: UserInfo): RequestContext => ({ user, profile, warnings: [] });

function created(user: UserInfo): ObjectHeader {
  const obj: ObjectHeader = {
    metadata: { name: "r" },
    spec: {
      request: "",
      signerName: "example.com/s",
      usages: ["client auth"],
      username: "body",
      uid: "body",
      groups: ["body"],
      extra: { body: ["x"] },
    },
    status: { conditions: [{ type: "Approved", status: "True" }] },
  };
  kind.strategy.prepareForCreate!(obj, ctx(user));
  return obj;
}

describe("CertificateSigningRequest requester", () => {
  it("copies username, uid, groups and extra from the caller", () => {
    const obj = created({ username: "alice", uid: "u-1", groups: ["devs"], extra: { scopes: ["a", "b"] } });
    expect(obj.spec).toMatchObject({ username: "alice", uid: "u-1", groups: ["devs"], extra: { scopes: ["a", "b"] } });
    expect(obj.status).toEqual({});
  });

  it("omits what the caller does not have, whatever the body said", () => {
    const obj = created({ username: "bob", groups: [], extra: {} });
    expect(obj.spec).toEqual({ request: "", signerName: "example.com/s", usages: ["client auth"], username: "bob" });
  });
});
