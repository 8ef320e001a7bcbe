// The approving reconciler: a node client certificate request is approved through `/approval` once a
// SubjectAccessReview says its requester may ask for it. Nothing is ever denied, and requests the
// approver does not recognise are left to people (Kubernetes' csrapproving controller).
import type { NamingProfile } from "@orch/api";
import type { ApiClient, Informer } from "@orch/client";
import { type Reconciler, TerminalError, readFromApi, writeStatus } from "@orch/controller";
import type { ParsedCertificateRequest } from "@orch/pki";
import { requesterMay } from "./access-review.js";
import { csrResource } from "@orch/api";
import { type Csr, parseRequest } from "./csr.js";
import { awaitsApproval, recognize } from "./recognize.js";

export interface ApproverOptions {
  client: Pick<ApiClient, "get" | "updateSubresource" | "create">;
  csrs: Pick<Informer<Csr>, "getByKey">;
  profile: NamingProfile;
}

export function csrApprover(options: ApproverOptions): Reconciler["reconcile"] {
  const { client, csrs, profile } = options;
  const ref = csrResource(profile);
  const certificatesGroup = profile.group("certificates");

  return async (key) => {
    const cached = csrs.getByKey(key);
    if (!cached || !awaitsApproval(cached)) return;
    // The decision is taken on what the API says the request is (its requester, its bytes), never on an event's word.
    const csr = await readFromApi(client, ref, cached);
    if (!csr || !awaitsApproval(csr)) return;
    const name = csr.metadata?.name ?? key;
    let request: ParsedCertificateRequest;
    try {
      request = parseRequest(csr);
    } catch (e) {
      // The spec never changes, so retrying cannot help (the apiserver checks the request at create anyway).
      throw new TerminalError(`unable to parse csr "${name}": ${(e as Error).message}`);
    }

    const tried: string[] = [];
    for (const recognition of recognize(profile, csr, request)) {
      tried.push(recognition.subresource);
      const allowed = await requesterMay(client, profile, csr, {
        group: certificatesGroup,
        resource: "certificatesigningrequests",
        verb: "create",
        subresource: recognition.subresource,
      });
      if (!allowed) continue;
      await writeStatus(
        client,
        ref,
        csr,
        (fresh) => {
          // Someone decided (or the signer failed it) in the meantime: theirs stands.
          if (!awaitsApproval(fresh)) return;
          fresh.status ??= {};
          (fresh.status.conditions ??= []).push({ type: "Approved", status: "True", reason: "AutoApproved", message: recognition.message });
        },
        { subresource: "approval" },
      );
      return;
    }
    // Retried with backoff, as Kubernetes' ignorable error: a permission granted later is then noticed.
    if (tried.length > 0) throw new Error(`recognized csr "${name}" as [${tried.join(" ")}] but subject access review was not approved`);
  };
}
