import * as asn1js from "asn1js";
import { describe, expect, it } from "vitest";
import { children, oid, octetString, readElement, sequence, time, unsignedInteger } from "../src/der.js";

// asn1js is an independent encoder: what ours writes must be the bytes it writes for the same value.
const viaAsn1js = (value: { toBER(): ArrayBuffer }) => Buffer.from(value.toBER()).toString("hex");
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("DER writer", () => {
  it("encodes object identifiers with multi-byte arcs as asn1js does", () => {
    for (const id of ["2.5.4.3", "1.2.840.10045.4.3.2", "1.3.6.1.4.1.311.10.3.3", "2.16.840.1.113730.4.1", "1.3.101.112", "2.5.29.37.0"]) {
      expect(hex(oid(id))).toBe(viaAsn1js(new asn1js.ObjectIdentifier({ value: id })));
    }
  });

  it("writes short, one-byte and two-byte long lengths", () => {
    for (const size of [0, 1, 127, 128, 255, 256, 1000, 70_000]) {
      const content = new Uint8Array(size).fill(7);
      expect(hex(octetString(content))).toBe(viaAsn1js(new asn1js.OctetString({ valueHex: content })));
    }
    const nested = sequence(octetString(new Uint8Array(200)), octetString(new Uint8Array(3)));
    expect(children(readElement(nested).content).map((e) => e.content.length)).toEqual([200, 3]);
  });

  it("writes unsigned integers minimally, with a zero byte before a set top bit", () => {
    expect(hex(unsignedInteger(Uint8Array.of(0, 0, 0x7f)))).toBe("02017f");
    expect(hex(unsignedInteger(Uint8Array.of(0x80, 1)))).toBe("0203008001");
    expect(hex(unsignedInteger(Uint8Array.of(0, 0)))).toBe("020100");
    expect(hex(unsignedInteger(Uint8Array.of(2)))).toBe("020102");
  });

  it("writes UTCTime through 2049 and GeneralizedTime from 2050, in whole seconds", () => {
    expect(Buffer.from(readElement(time(new Date("2049-12-31T23:59:59Z"))).bytes).toString("latin1")).toBe("\x17\x0d491231235959Z");
    expect(Buffer.from(readElement(time(new Date("2050-01-01T00:00:00Z"))).bytes).toString("latin1")).toBe("\x18\x0f20500101000000Z");
  });

  it("refuses truncated input", () => {
    expect(() => readElement(Uint8Array.of(0x30, 0x05, 1, 2))).toThrow(/truncated/);
    expect(() => readElement(Uint8Array.of(0x30))).toThrow(/truncated/);
    expect(() => readElement(Uint8Array.of(0x30, 0x80))).toThrow(/unsupported length/);
  });
});
