// The signing reconciler: an approved request of a well-known signer gets a certificate from the
// cluster CA, or a Failed condition when that signer does not issue such certificates. Both are
// written through `/status` with optimistic concurrency; the mutation re-checks the fresh object, so
// a request is never given a second certificate or failed after it was issued (Kubernetes' signer
// relies on the same guard: the apiserver refuses to replace a certificate).
import type { ApiClient, Informer } from "@orch/client";
import { type Reconciler, TerminalError, readFromApi, writeStatus } from "@orch/controller";
import { rfc3339 } from "@orch/machinery";
import {
  type ParsedCertificateRequest,
  certificateLifetimeSeconds,
  csrRequestDer,
  parseCertificateRequest,
  signCertificateRequest,
} from "@orch/pki";
import type { CaFiles } from "./ca-files.js";
import { type CertificateSigningRequest as Csr, type NamingProfile, csrResource } from "@orch/api";
import { awaitsSigning, signerRefusal } from "./rules.js";

export interface SignerOptions {
  client: Pick<ApiClient, "get" | "updateSubresource">;
  csrs: Pick<Informer<Csr>, "getByKey">;
  profile: NamingProfile;
  ca: CaFiles;
  maxLifetimeSeconds: number;
}

export function csrSigner(options: SignerOptions): Reconciler["reconcile"] {
  const { client, csrs, profile, ca, maxLifetimeSeconds } = options;
  const ref = csrResource(profile);
  const pending = (csr: Csr) => awaitsSigning(profile, csr);

  return async (key) => {
    const cached = csrs.getByKey(key);
    if (!cached || !pending(cached)) return;
    // What is signed is what the API says the request is, never an event's word for it.
    const csr = await readFromApi(client, ref, cached);
    if (!csr || !pending(csr)) return;
    const { der, request } = readRequest(csr, key);
    const usages = csr.spec.usages ?? [];

    const refusal = signerRefusal(profile, csr.spec.signerName, request, usages);
    if (refusal !== undefined) {
      await writeStatus(client, ref, csr, (fresh) => {
        if (!pending(fresh)) return;
        fresh.status ??= {};
        (fresh.status.conditions ??= []).push({
          type: "Failed",
          status: "True",
          reason: "SignerValidationFailure",
          message: refusal,
          lastUpdateTime: rfc3339(),
        });
      });
      return;
    }

    const certPem = await signCertificateRequest({
      ca: await ca.current(),
      request: der,
      usages,
      lifetimeSeconds: certificateLifetimeSeconds(csr.spec.expirationSeconds, maxLifetimeSeconds),
    });
    await writeStatus(client, ref, csr, (fresh) => {
      if (!pending(fresh)) return;
      fresh.status ??= {};
      fresh.status.certificate = Buffer.from(certPem).toString("base64");
    });
  };
}

function readRequest(csr: Csr, key: string): { der: Uint8Array; request: ParsedCertificateRequest } {
  try {
    const der = csrRequestDer(Buffer.from(csr.spec.request, "base64"));
    return { der, request: parseCertificateRequest(der) };
  } catch (e) {
    // The spec never changes, so retrying cannot help (the apiserver checks the request at create anyway).
    throw new TerminalError(`unable to parse csr "${csr.metadata?.name ?? key}": ${(e as Error).message}`);
  }
}
