import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { isIPv4, isIPv6 } from "node:net";
import { ia5String, oid, sequence, set, tlv, utf8String } from "./der.js";

export const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyIdentifier: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  extensionRequest: "1.2.840.113549.1.9.14",
  rsaEncryption: "1.2.840.113549.1.1.1",
  ecPublicKey: "1.2.840.10045.2.1",
  ed25519: "1.3.101.112",
} as const;

/** Subject of a certificate or request. Only the attributes Kubernetes identity uses. */
export interface Subject {
  commonName?: string;
  organizations: string[];
}

/** Subject alternative names, in the shape Go's x509 splits them. */
export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

/**
 * A DER Name with one attribute per RDN, organizations before the common name (Go's order).
 * Built by hand because pkijs would put all attributes into one multi-valued RDN.
 */
export function buildName(subject: { commonName?: string; organizations?: string[] }): pkijs.RelativeDistinguishedNames {
  const rdn = (type: string, value: string) =>
    new asn1js.Set({
      value: [new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: type }), new asn1js.Utf8String({ value })] })],
    });
  const rdns = (subject.organizations ?? []).map((o) => rdn(OID.organization, o));
  if (subject.commonName) rdns.push(rdn(OID.commonName, subject.commonName));
  // Round-trip through DER so pkijs keeps these exact bytes when it re-encodes the name.
  return pkijs.RelativeDistinguishedNames.fromBER(new asn1js.Sequence({ value: rdns }).toBER());
}

export function readName(name: pkijs.RelativeDistinguishedNames): Subject {
  const subject: Subject = { organizations: [] };
  for (const atv of name.typesAndValues) {
    const value = stringValue(atv.value);
    if (value === undefined) continue;
    // Last CN wins, as in Go's pkix.Name: the apiserver's client-cert authenticator sees that one.
    if (atv.type === OID.commonName) subject.commonName = value;
    else if (atv.type === OID.organization) subject.organizations.push(value);
  }
  return subject;
}

function stringValue(value: unknown): string | undefined {
  const block = (value as { valueBlock?: { value?: unknown } }).valueBlock;
  return typeof block?.value === "string" ? block.value : undefined;
}

/** buildName's Name as DER bytes, for certificates written by ./der.ts. */
export function nameDer(subject: { commonName?: string; organizations?: string[] }): Uint8Array {
  const rdn = (type: string, value: string) => set(sequence(oid(type), utf8String(value)));
  const rdns = (subject.organizations ?? []).map((o) => rdn(OID.organization, o));
  if (subject.commonName) rdns.push(rdn(OID.commonName, subject.commonName));
  return sequence(...rdns);
}

/** buildAltNames' GeneralNames as DER bytes (implicit context tags: dNSName [2], rfc822Name [1], URI [6], iPAddress [7]). */
export function altNamesDer(names: Partial<SubjectAltNames>): Uint8Array | undefined {
  const altNames = [
    ...(names.dnsNames ?? []).map((v) => ia5String(ia5(v, "DNS name"), 0x82)),
    ...(names.emailAddresses ?? []).map((v) => ia5String(ia5(v, "email address"), 0x81)),
    ...(names.uris ?? []).map((v) => ia5String(ia5(v, "URI"), 0x86)),
    ...(names.ipAddresses ?? []).map((v) => tlv(0x87, encodeIp(v))),
  ];
  return altNames.length ? sequence(...altNames) : undefined;
}

export function buildAltNames(names: Partial<SubjectAltNames>): pkijs.AltName | undefined {
  const altNames: pkijs.GeneralName[] = [];
  for (const v of names.dnsNames ?? []) altNames.push(new pkijs.GeneralName({ type: 2, value: ia5(v, "DNS name") }));
  for (const v of names.emailAddresses ?? []) altNames.push(new pkijs.GeneralName({ type: 1, value: ia5(v, "email address") }));
  for (const v of names.uris ?? []) altNames.push(new pkijs.GeneralName({ type: 6, value: ia5(v, "URI") }));
  for (const v of names.ipAddresses ?? []) {
    altNames.push(new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: encodeIp(v) }) }));
  }
  return altNames.length ? new pkijs.AltName({ altNames }) : undefined;
}

function ia5(value: string, what: string): string {
  if (!/^[\x00-\x7f]*$/.test(value) || value === "") throw new Error(`invalid ${what} ${JSON.stringify(value)}: must be non-empty ASCII`);
  return value;
}

export function readAltNames(altName: pkijs.AltName | undefined): SubjectAltNames {
  const out: SubjectAltNames = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] };
  for (const gn of altName?.altNames ?? []) {
    if (gn.type === 2) out.dnsNames.push(String(gn.value));
    else if (gn.type === 1) out.emailAddresses.push(String(gn.value));
    else if (gn.type === 6) out.uris.push(String(gn.value));
    else if (gn.type === 7) out.ipAddresses.push(decodeIp((gn.value as asn1js.OctetString).valueBlock.valueHexView));
  }
  return out;
}

export function encodeIp(ip: string): Uint8Array {
  if (isIPv4(ip)) return Uint8Array.from(ip.split(".").map(Number));
  if (!isIPv6(ip) || ip.includes("%")) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
  let text = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  return bytes;
}

/** Text form as Go's net.IP.String prints it (RFC 5952; IPv4-mapped addresses as dotted quads). */
export function decodeIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  if (bytes.length !== 16) throw new Error(`invalid IP address SAN of ${bytes.length} bytes`);
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return Array.from(bytes.subarray(12)).join(".");
  }
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2] ?? 0) << 8) | (bytes[i * 2 + 1] ?? 0));
  // Longest run of two or more zero groups becomes "::" (first one on ties).
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

/** DER of a pkijs or asn1js object as a Uint8Array. */
export function der(value: { toBER(sizeOnly?: boolean): ArrayBuffer }): Uint8Array {
  return new Uint8Array(value.toBER());
}

/** Parses exactly one DER element, failing on trailing bytes (as Go does). */
export function parseDer(bytes: Uint8Array, what: string): asn1js.AsnType {
  const asn1 = asn1js.fromBER(bytes);
  if (asn1.offset === -1) throw new Error(`invalid ${what}: not DER${asn1.result.error ? ` (${asn1.result.error})` : ""}`);
  if (asn1.offset !== bytes.byteLength) throw new Error(`invalid ${what}: trailing data after DER`);
  return asn1.result;
}
