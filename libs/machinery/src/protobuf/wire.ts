// The protobuf wire format, read side only (https://protobuf.dev/programming-guides/encoding/): a message is a
// sequence of (tag, value) pairs; the tag is varint(field << 3 | wireType).

/** A body that is not well-formed Kubernetes protobuf; the apiserver answers 400. */
export class ProtobufDecodeError extends Error {
  override readonly name = "ProtobufDecodeError";
}

export const WireType = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

const MAX_LENGTH = 0x7fffffff;

export class WireReader {
  private pos = 0;
  private readonly end: number;

  constructor(private readonly bytes: Uint8Array) {
    this.end = bytes.length;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Field number and wire type of the next field. */
  tag(): { field: number; wireType: number } {
    const key = this.varint();
    const field = Number(key >> 3n);
    if (field < 1 || field > 0x1fffffff) throw new ProtobufDecodeError(`invalid field number ${field}`);
    return { field, wireType: Number(key & 7n) };
  }

  /** An unsigned varint of up to 64 bits. */
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new ProtobufDecodeError("unexpected end of data in varint");
      const b = this.bytes[this.pos++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    throw new ProtobufDecodeError("varint longer than 10 bytes");
  }

  /** A length-delimited value, as a view on the underlying buffer (no copy). */
  bytesField(): Uint8Array {
    const length = this.varint();
    if (length > BigInt(MAX_LENGTH) || this.pos + Number(length) > this.end) {
      throw new ProtobufDecodeError(`length ${length} exceeds the remaining ${this.end - this.pos} bytes`);
    }
    const start = this.pos;
    this.pos += Number(length);
    return this.bytes.subarray(start, this.pos);
  }

  /** Skips a value of the given wire type (an unknown field). */
  skip(wireType: number): void {
    switch (wireType) {
      case WireType.varint:
        this.varint();
        return;
      case WireType.fixed64:
        this.fixed(8);
        return;
      case WireType.bytes:
        this.bytesField();
        return;
      case WireType.fixed32:
        this.fixed(4);
        return;
      default:
        // 3 and 4 are the proto2 groups, which no Kubernetes message uses; 6 and 7 are not defined.
        throw new ProtobufDecodeError(`unsupported wire type ${wireType}`);
    }
  }

  private fixed(size: number): void {
    if (this.pos + size > this.end) throw new ProtobufDecodeError(`unexpected end of data in fixed${size * 8}`);
    this.pos += size;
  }
}
