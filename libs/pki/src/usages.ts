import type * as asn1js from "asn1js";
import { bitString } from "./der.js";

// Bit numbers of the X.509 KeyUsage BIT STRING (RFC 5280 4.2.1.3), keyed by the Kubernetes
// certificates/v1 usage strings (keyUsageDict in pkg/controller/certificates/authority/policies.go).
const keyUsageBits = {
  signing: 0,
  "digital signature": 0,
  "content commitment": 1,
  "key encipherment": 2,
  "data encipherment": 3,
  "key agreement": 4,
  "cert sign": 5,
  "crl sign": 6,
  "encipher only": 7,
  "decipher only": 8,
} as const;

// extKeyUsageDict; listed in Go's ExtKeyUsage enum order, the order the signer emits them in.
const extKeyUsageOids = {
  any: "2.5.29.37.0",
  "server auth": "1.3.6.1.5.5.7.3.1",
  "client auth": "1.3.6.1.5.5.7.3.2",
  "code signing": "1.3.6.1.5.5.7.3.3",
  "email protection": "1.3.6.1.5.5.7.3.4",
  "s/mime": "1.3.6.1.5.5.7.3.4",
  "ipsec end system": "1.3.6.1.5.5.7.3.5",
  "ipsec tunnel": "1.3.6.1.5.5.7.3.6",
  "ipsec user": "1.3.6.1.5.5.7.3.7",
  timestamping: "1.3.6.1.5.5.7.3.8",
  "ocsp signing": "1.3.6.1.5.5.7.3.9",
  "microsoft sgc": "1.3.6.1.4.1.311.10.3.3",
  "netscape sgc": "2.16.840.1.113730.4.1",
} as const;

/** Every usage string accepted by certificates.k8s.io/v1 (`spec.usages`). */
export const KEY_USAGES = [
  ...(Object.keys(keyUsageBits) as (keyof typeof keyUsageBits)[]),
  ...(Object.keys(extKeyUsageOids) as (keyof typeof extKeyUsageOids)[]),
] as const;
export type KeyUsage = keyof typeof keyUsageBits | keyof typeof extKeyUsageOids;

/** Splits Kubernetes usage strings into KeyUsage bits and EKU OIDs; throws on unknown ones like the signer. */
export function usagesToX509(usages: readonly string[]): { keyUsageBits: Set<number>; extKeyUsageOids: string[] } {
  const bits = new Set<number>();
  const ekus = new Set<string>();
  const unrecognized: string[] = [];
  for (const usage of usages) {
    if (Object.hasOwn(keyUsageBits, usage)) bits.add(keyUsageBits[usage as keyof typeof keyUsageBits]);
    else if (Object.hasOwn(extKeyUsageOids, usage)) ekus.add(extKeyUsageOids[usage as keyof typeof extKeyUsageOids]);
    else unrecognized.push(usage);
  }
  if (unrecognized.length) throw new Error(`unrecognized usage values: ${JSON.stringify(unrecognized)}`);
  const order = Object.values(extKeyUsageOids) as string[];
  return { keyUsageBits: bits, extKeyUsageOids: [...ekus].sort((a, b) => order.indexOf(a) - order.indexOf(b)) };
}

/** The KeyUsage BIT STRING, DER: trailing zero bits dropped (X.690 11.2.2). */
export function keyUsageBitString(bits: Set<number>): Uint8Array {
  const highest = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  return bitString(bytes, 7 - (highest & 7));
}

const keyUsageNames = [
  "digital signature",
  "content commitment",
  "key encipherment",
  "data encipherment",
  "key agreement",
  "cert sign",
  "crl sign",
  "encipher only",
  "decipher only",
] as const;

export function keyUsagesFromBitString(bitString: asn1js.BitString): KeyUsage[] {
  const bytes = bitString.valueBlock.valueHexView;
  const bitCount = bytes.length * 8 - bitString.valueBlock.unusedBits;
  return keyUsageNames.filter((_, bit) => bit < bitCount && ((bytes[bit >> 3] ?? 0) & (0x80 >> (bit & 7))) !== 0);
}

/** Kubernetes usage string for an EKU OID; unknown OIDs are returned as they are. */
export function extKeyUsageName(oid: string): string {
  if (oid === extKeyUsageOids["email protection"]) return "email protection";
  const entry = Object.entries(extKeyUsageOids).find(([, o]) => o === oid);
  return entry ? entry[0] : oid;
}
