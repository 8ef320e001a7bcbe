// Gets/s of a custom resource through its CRD's conversion webhook, beside gets/s of the same objects
// in the storage version (no call), on one apiserver in one run. The CRD has v1 (storage) and v2, the
// webhook renames one field; it is an HTTPS server in this process (it shares the machine with the
// load, as a webhook next to a development control plane does), serving with the apiserver's own
// certificate, which names 127.0.0.1.
import { type Server, createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Pool } from "undici";
import { type LoadResult, type Tls, inTurn, runLoad } from "./load.js";

export interface ConversionFigures {
  /** GET in the storage version: no conversion. */
  plain: LoadResult;
  /** GET in the other version: one ConversionReview per request. */
  webhook: LoadResult;
}

const GROUP = "conversion.bench.example.com";
const CRDS = "/apis/apiextensions.orch.io/v1/customresourcedefinitions";
const OBJECTS = 100;

async function call(p: Pool, method: string, path: string, body?: unknown): Promise<any> {
  const res = await p.request({
    path,
    method: method as "GET",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

/** v1 `spec.host` ⇄ v2 `spec.hostname`. */
function webhookServer(serving: { cert: string; key: string }): Promise<Server> {
  const server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const { uid, desiredAPIVersion, objects } = review.request;
      const convertedObjects = objects.map((o: any) => {
        const { host, hostname, ...rest } = o.spec ?? {};
        const spec = desiredAPIVersion.endsWith("/v2") ? { ...rest, hostname: host } : { ...rest, host: hostname };
        return { ...o, apiVersion: desiredAPIVersion, spec };
      });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: "ConversionReview",
          response: { uid, result: { status: "Success" }, convertedObjects },
        }),
      );
    });
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server)));
}

const schema = (field: string) => ({
  openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { [field]: { type: "string" } } } } },
});

export async function conversionFigures(
  p: Pool,
  tls: Tls,
  serving: { cert: string; key: string },
  gets: number,
  concurrency: number,
): Promise<ConversionFigures> {
  const server = await webhookServer(serving);
  const port = (server.address() as AddressInfo).port;
  try {
    const crd = await call(p, "POST", CRDS, {
      apiVersion: "apiextensions.orch.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `gadgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: "Namespaced",
        names: { plural: "gadgets", kind: "Gadget" },
        versions: [
          { name: "v1", served: true, storage: true, schema: schema("host") },
          { name: "v2", served: true, storage: false, schema: schema("hostname") },
        ],
        conversion: {
          strategy: "Webhook",
          webhook: {
            conversionReviewVersions: ["v1"],
            clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(tls.ca).toString("base64") },
          },
        },
      },
    });
    // Established as the crd-controller would: this apiserver runs without it.
    crd.status = {
      ...crd.status,
      acceptedNames: crd.spec.names,
      conditions: [
        { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "", lastTransitionTime: new Date().toISOString() },
        { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "", lastTransitionTime: new Date().toISOString() },
      ],
    };
    await call(p, "PUT", `${CRDS}/gadgets.${GROUP}/status`, crd);
    const path = (version: string) => `/apis/${GROUP}/${version}/namespaces/default/gadgets`;
    for (let i = 0; i < OBJECTS; i++) {
      await call(p, "POST", path("v1"), {
        apiVersion: `${GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: `g-${i}` },
        spec: { host: `h${i}` },
      });
    }
    const get = (version: string, count: number) =>
      runLoad(
        count,
        concurrency,
        async (i) => {
          const res = await p.request({ path: `${path(version)}/g-${i % OBJECTS}`, method: "GET" });
          await res.body.dump();
          return res.statusCode;
        },
        200,
      );
    // Warm both (kept-alive connections), then measure them in turn.
    await get("v1", 500);
    await get("v2", 500);
    const third = Math.ceil(gets / 3);
    return await inTurn({ plain: () => get("v1", third), webhook: () => get("v2", third) });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
