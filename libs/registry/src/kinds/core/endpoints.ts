// Endpoints (core/v1), with ValidateEndpoints (pkg/apis/core/validation): each subset names at least
// one address, addresses are IPs outside the special ranges, ports are valid and named when several.
// The endpoints controller (apps/apiserver/src/controllers/endpoints.ts) writes them for Services with a
// selector; the apiserver writes the `kubernetes` Service's.
import { type EndpointAddress, type EndpointPort, type Endpoints, Endpoints as EndpointsSchema } from "@orch/api";
import { type FieldError, FieldPath, fieldError, isQualifiedName, nameIsDNSSubdomain } from "@orch/machinery";
import { AGE, column, defineKind } from "../../generic/define.js";
import type { KindDefinition } from "../../generic/kind.js";
import { dnsLabel, invalidEach, isValidPortNum, validIP } from "./pod-validation-formats.js";
import { validateNonSpecialIP } from "./service.js";

const PROTOCOLS = ["SCTP", "TCP", "UDP"];

function validateAddress(address: EndpointAddress, at: FieldPath): FieldError[] {
  const errs = validIP(address.ip, at.child("ip"));
  if (address.hostname) errs.push(...dnsLabel(address.hostname, at.child("hostname")));
  if (address.nodeName !== undefined)
    errs.push(...invalidEach(at.child("nodeName"), address.nodeName, nameIsDNSSubdomain(address.nodeName, false)));
  errs.push(...validateNonSpecialIP(address.ip, at.child("ip")));
  return errs;
}

/** validateEndpointPort, shared by both Endpoints and (with optional fields) EndpointSlices. */
export function validateEndpointPort(port: EndpointPort, requireName: boolean, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !port.name) errs.push(fieldError.required(at.child("name")));
  else if (port.name) errs.push(...dnsLabel(port.name, at.child("name")));
  for (const msg of isValidPortNum(port.port)) errs.push(fieldError.invalid(at.child("port"), port.port, msg));
  if (!port.protocol) errs.push(fieldError.required(at.child("protocol")));
  else if (!PROTOCOLS.includes(port.protocol)) errs.push(fieldError.notSupported(at.child("protocol"), port.protocol, PROTOCOLS));
  if (port.appProtocol !== undefined)
    errs.push(...invalidEach(at.child("appProtocol"), port.appProtocol, isQualifiedName(port.appProtocol)));
  return errs;
}

export function validateEndpoints(endpoints: Endpoints): FieldError[] {
  const errs: FieldError[] = [];
  (endpoints.subsets ?? []).forEach((subset, i) => {
    const at = FieldPath.root("subsets").index(i);
    // Headless services may have endpoints without ports, never without addresses.
    if (!subset.addresses?.length && !subset.notReadyAddresses?.length)
      errs.push(fieldError.required(at, "must specify `addresses` or `notReadyAddresses`"));
    (subset.addresses ?? []).forEach((a, j) => errs.push(...validateAddress(a, at.child("addresses").index(j))));
    (subset.notReadyAddresses ?? []).forEach((a, j) => errs.push(...validateAddress(a, at.child("notReadyAddresses").index(j))));
    const ports = subset.ports ?? [];
    ports.forEach((p, j) => errs.push(...validateEndpointPort(p, ports.length > 1, at.child("ports").index(j))));
  });
  return errs;
}

/** formatEndpoints (printers.go): up to three ready `ip:port`, then `+ N more...`; `<none>` without subsets. */
export function formatEndpoints(endpoints: Endpoints): string {
  const subsets = endpoints.subsets ?? [];
  if (!subsets.length) return "<none>";
  const MAX = 3;
  const list: string[] = [];
  let count = 0;
  let more = false;
  const add = (text: string) => {
    if (list.length === MAX) more = true;
    else list.push(text);
  };
  for (const subset of subsets) {
    const addresses = subset.addresses ?? [];
    const hostPort = (ip: string, port: number) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
    if (!subset.ports?.length) {
      count += addresses.length;
      for (const a of addresses) add(a.ip);
      continue;
    }
    for (const port of subset.ports) {
      count += addresses.length;
      for (const a of addresses) add(hostPort(a.ip, port.port));
    }
  }
  const text = list.join(",");
  return more ? `${text} + ${count - MAX} more...` : text;
}

export const endpoints = (): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Endpoints",
    listKind: "EndpointsList",
    singular: "endpoints",
    plural: "endpoints",
    shortNames: ["ep"],
    namespaced: true,
    schema: EndpointsSchema,
    strategy: { validate: validateEndpoints, validateUpdate: validateEndpoints },
    printerColumns: [column("Endpoints", "string", (o) => formatEndpoints(o as Endpoints)), AGE],
  });
