// EndpointSlice (discovery.<domain>/v1), with pkg/apis/discovery/validation: an address type that never
// changes, at most 1000 endpoints of 1 to 100 addresses of that type, at most 100 ports with unique names.
import { type EndpointSlice, EndpointSlice as EndpointSliceSchema, type NamingProfile } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateLabels,
} from "@orch/machinery";
import { isIP } from "node:net";
import { AGE, column, defineKind } from "../../generic/define.js";
import type { KindDefinition } from "../../generic/kind.js";
import { invalidEach, isValidPortNum } from "../core/pod-validation-formats.js";
import { validateNonSpecialIP } from "../core/service.js";

const ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"];
const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_HINTS = 8;

function validateAddress(address: string, addressType: string | undefined, at: FieldPath): FieldError[] {
  switch (addressType) {
    case "IPv4":
      return isIP(address) === 4 ? validateNonSpecialIP(address, at) : [fieldError.invalid(at, address, "must be a valid IPv4 address")];
    case "IPv6":
      return isIP(address) === 6 ? validateNonSpecialIP(address, at) : [fieldError.invalid(at, address, "must be a valid IPv6 address")];
    case "FQDN": {
      const errs = invalidEach(at, address, address.length > 253 ? ["must be no more than 253 characters"] : []);
      if (address.replace(/\.$/, "").split(".").length < 2)
        errs.push(fieldError.invalid(at, address, "should be a domain with at least two segments separated by dots"));
      for (const label of address.replace(/\.$/, "").split(".")) errs.push(...invalidEach(at, address, isDNS1123Label(label)));
      return errs;
    }
    default:
      return [];
  }
}

export function validateEndpointSlice(slice: EndpointSlice): FieldError[] {
  const errs: FieldError[] = [];
  const addressType = slice.addressType;
  if (!addressType) errs.push(fieldError.required("addressType"));
  else if (!ADDRESS_TYPES.includes(addressType)) errs.push(fieldError.notSupported("addressType", addressType, ADDRESS_TYPES));
  const endpoints = slice.endpoints ?? [];
  const endpointsAt = FieldPath.root("endpoints");
  if (endpoints.length > MAX_ENDPOINTS) errs.push(fieldError.tooMany(endpointsAt, endpoints.length, MAX_ENDPOINTS));
  else {
    endpoints.forEach((endpoint, i) => {
      const at = endpointsAt.index(i);
      const addressesAt = at.child("addresses");
      if (endpoint.addresses.length === 0) errs.push(fieldError.required(addressesAt, "must contain at least 1 address"));
      else if (endpoint.addresses.length > MAX_ADDRESSES)
        errs.push(fieldError.tooMany(addressesAt, endpoint.addresses.length, MAX_ADDRESSES));
      endpoint.addresses.forEach((address, j) => errs.push(...validateAddress(address, addressType, addressesAt.index(j))));
      if (endpoint.nodeName != null)
        errs.push(...invalidEach(at.child("nodeName"), endpoint.nodeName, nameIsDNSSubdomain(endpoint.nodeName, false)));
      const topology = endpoint.deprecatedTopology ?? {};
      if (Object.keys(topology).length > MAX_TOPOLOGY_LABELS)
        errs.push(fieldError.tooMany(at.child("deprecatedTopology"), Object.keys(topology).length, MAX_TOPOLOGY_LABELS));
      errs.push(...validateLabels(topology, at.child("deprecatedTopology")));
      if (endpoint.hostname != null) errs.push(...invalidEach(at.child("hostname"), endpoint.hostname, isDNS1123Label(endpoint.hostname)));
      const zones = endpoint.hints?.forZones ?? [];
      if (zones.length > MAX_HINTS) errs.push(fieldError.tooMany(at.child("hints", "forZones"), zones.length, MAX_HINTS));
      const seenZones = new Set<string>();
      zones.forEach((zone, j) => {
        const zoneAt = at.child("hints", "forZones").index(j);
        if (seenZones.has(zone.name)) errs.push(fieldError.duplicate(zoneAt, zone.name));
        seenZones.add(zone.name);
        errs.push(...invalidEach(zoneAt.child("name"), zone.name, isValidLabelValue(zone.name)));
      });
    });
  }
  const ports = slice.ports ?? [];
  const portsAt = FieldPath.root("ports");
  if (ports.length > MAX_PORTS) errs.push(fieldError.tooMany(portsAt, ports.length, MAX_PORTS));
  else {
    const names = new Set<string>();
    ports.forEach((port, i) => {
      const at = portsAt.index(i);
      const name = port.name ?? "";
      if (name) errs.push(...invalidEach(at.child("name"), name, isDNS1123Label(name)));
      if (names.has(name)) errs.push(fieldError.duplicate(at.child("name"), name));
      names.add(name);
      if (!port.protocol) errs.push(fieldError.required(at.child("protocol")));
      else if (!PROTOCOLS.includes(port.protocol)) errs.push(fieldError.notSupported(at.child("protocol"), port.protocol, PROTOCOLS));
      if (port.port != null) for (const msg of isValidPortNum(port.port)) errs.push(fieldError.invalid(at.child("port"), port.port, msg));
      if (port.appProtocol != null) errs.push(...invalidEach(at.child("appProtocol"), port.appProtocol, isQualifiedName(port.appProtocol)));
    });
  }
  return errs;
}

function validateEndpointSliceUpdate(slice: EndpointSlice, old: EndpointSlice): FieldError[] {
  const errs = validateEndpointSlice(slice);
  if (slice.addressType !== old.addressType) errs.unshift(fieldError.invalid("addressType", slice.addressType ?? "", "field is immutable"));
  return errs;
}

/** listWithMoreString (printers.go): three items, then `+ N more...`; `<unset>` when there are none. */
function listWithMore(items: string[]): string {
  const MAX = 3;
  if (items.length > MAX) return `${items.slice(0, MAX).join(",")} + ${items.length - MAX} more...`;
  return items.length ? items.join(",") : "<unset>";
}

const asSlice = (o: unknown) => o as EndpointSlice;

export const endpointSlices = (profile: NamingProfile): KindDefinition =>
  defineKind({
    group: profile.group("discovery"),
    version: "v1",
    kind: "EndpointSlice",
    plural: "endpointslices",
    namespaced: true,
    schema: EndpointSliceSchema,
    strategy: {
      validateName: (name, prefix) => nameIsDNSSubdomain(name, prefix),
      validate: validateEndpointSlice,
      validateUpdate: validateEndpointSliceUpdate,
    },
    printerColumns: [
      column("AddressType", "string", (o) => asSlice(o).addressType ?? ""),
      column("Ports", "string", (o) =>
        listWithMore((asSlice(o).ports ?? []).map((p) => (p.port != null ? String(p.port) : p.name || "*"))),
      ),
      column("Endpoints", "string", (o) => listWithMore((asSlice(o).endpoints ?? []).flatMap((e) => e.addresses))),
      AGE,
    ],
  });
