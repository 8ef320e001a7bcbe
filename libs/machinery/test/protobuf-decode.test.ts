// Wire-level cases kubectl does not produce: hand-assembled bodies for the decoder's edge cases, kinds kubectl never
// sends (TokenReview, SubjectAccessReview, Lease, Event) and malformed input.
import { describe, expect, it } from "vitest";
import {
  decodeKubernetesProtobuf,
  decodeKubernetesProtobufWithDiagnostics,
  hasKubernetesProtobufMagic,
  PROTOBUF_CONTENT_TYPE,
  ProtobufDecodeError,
  protobufKinds,
  UnsupportedProtobufKindError,
} from "../src/protobuf/index.js";
import { messageTables } from "../src/protobuf/kinds.js";
import { compileMessages } from "../src/protobuf/schema.js";

// A minimal protobuf writer. A field is its encoded bytes; a message is the concatenation of its fields.
type Bytes = number[];
const varint = (value: number | bigint): Bytes => {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    out.push(rest ? low | 0x80 : low);
  } while (rest);
  return out;
};
const key = (field: number, wireType: number) => varint((field << 3) | wireType);
const int = (field: number, value: number | bigint): Bytes => [...key(field, 0), ...varint(value)];
const bytes = (field: number, value: string | Bytes): Bytes => {
  const data = typeof value === "string" ? [...new TextEncoder().encode(value)] : value;
  return [...key(field, 2), ...varint(data.length), ...data];
};
const msg = (field: number, ...fields: Bytes[]): Bytes => bytes(field, fields.flat());
const fixed64 = (field: number, value: bigint): Bytes => [
  ...key(field, 1),
  ...Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn)),
];
const fixed32 = (field: number, value: number): Bytes => [...key(field, 5), value & 0xff, 0, 0, 0];
const entry = (field: number, k: string, value: Bytes) => msg(field, bytes(1, k), value);
const time = (field: number, seconds: number, nanos = 0) => msg(field, int(1, seconds), int(2, nanos));
const envelope = (apiVersion: string, kind: string, ...fields: Bytes[]) =>
  new Uint8Array([
    ...[0x6b, 0x38, 0x73, 0x00],
    ...msg(1, bytes(1, apiVersion), bytes(2, kind)),
    ...msg(2, ...fields),
    ...bytes(3, ""),
    ...bytes(4, ""),
  ]);
const hex = (text: string) => new Uint8Array(text.match(/../g)?.map((h) => parseInt(h, 16)) ?? []);

describe("decodeKubernetesProtobuf", () => {
  it("decodes the TokenRequest captured in the research notes", () => {
    const captured = hex(
      "6b387300" +
        "0a280a18" +
        "61757468656e7469636174696f6e2e6b38732e696f2f7631" +
        "120c" +
        "546f6b656e52657175657374" +
        "1222" +
        "0a100a0012001a0022002a00320038004200" +
        "12080a03666f6f20d804" +
        "1a040a001200" +
        "1a002200",
    );
    expect(decodeKubernetesProtobuf(captured)).toStrictEqual({
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: {},
      spec: { audiences: ["foo"], expirationSeconds: 600 },
      status: { token: "" },
    });
  });

  it("follows Go's JSON for pointers, omitempty and IntOrString in a Deployment", () => {
    const body = envelope(
      "apps/v1",
      "Deployment",
      msg(1, bytes(1, "web"), int(7, 0), msg(8)),
      msg(
        2,
        int(1, 0), // replicas: *int32, kept at zero
        msg(2, msg(2, bytes(1, "tier"), bytes(2, "In"), bytes(3, "a"), bytes(3, "b"))),
        msg(3, msg(1, entry(11, "tier", bytes(2, "a"))), msg(2, msg(2, bytes(1, "c"), bytes(2, "nginx")))),
        msg(4, bytes(1, "RollingUpdate"), msg(2, msg(1, int(1, 0), int(2, 0)), msg(2, int(1, 1), bytes(3, "25%")))),
        int(5, 0), // minReadySeconds: omitempty
        int(6, 10),
        int(7, 0), // paused: omitempty
        int(9, 600),
      ),
      msg(3, int(1, 0), int(2, 0)),
    );
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "Deployment",
      apiVersion: "apps/v1",
      metadata: { name: "web" },
      spec: {
        replicas: 0,
        selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] },
        template: { metadata: { labels: { tier: "a" } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "25%" } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: {},
    });
  });

  it("keeps zero values of fields without omitempty", () => {
    const body = envelope("scheduling.k8s.io/v1", "PriorityClass", msg(1, bytes(1, "zero")), int(2, 0), int(3, 0));
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "PriorityClass",
      apiVersion: "scheduling.k8s.io/v1",
      metadata: { name: "zero" },
      value: 0,
    });
  });

  it("sign-extends negative int32 and int64 varints and reads packed repeated numbers", () => {
    const packed = [...varint(-1), ...varint(7), ...varint(2 ** 40)];
    const body = envelope("v1", "Pod", msg(1, int(10, -30)), msg(2, int(25, -5), msg(14, bytes(4, packed), int(4, 9)), int(5, -1)));
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "Pod",
      apiVersion: "v1",
      metadata: { deletionGracePeriodSeconds: -30 },
      spec: { activeDeadlineSeconds: -1, securityContext: { supplementalGroups: [-1, 7, 2 ** 40, 9] }, priority: -5 },
    });
  });

  it("writes Time with whole seconds, MicroTime with microseconds, and leaves out the zero time", () => {
    const body = envelope(
      "coordination.k8s.io/v1",
      "Lease",
      msg(1, bytes(1, "leader"), msg(8), time(9, 1_700_000_000, 999_999_999)),
      msg(2, bytes(1, "me"), int(2, 15), time(3, 1_700_000_000, 123_456_789), time(4, 0), int(5, 0)),
    );
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "Lease",
      apiVersion: "coordination.k8s.io/v1",
      metadata: { name: "leader", deletionTimestamp: "2023-11-14T22:13:20Z" },
      spec: {
        holderIdentity: "me",
        leaseDurationSeconds: 15,
        acquireTime: "2023-11-14T22:13:20.123456Z",
        renewTime: "1970-01-01T00:00:00.000000Z",
        leaseTransitions: 0,
      },
    });
  });

  it("handles times before 1970 and rejects years outside 0000-9999", () => {
    const before = envelope("v1", "Namespace", msg(1, time(8, -1)));
    expect(decodeKubernetesProtobuf(before)).toMatchObject({ metadata: { creationTimestamp: "1969-12-31T23:59:59Z" } });
    const micro = envelope("coordination.k8s.io/v1", "Lease", msg(2, time(3, -1, 500_000_000)));
    expect(decodeKubernetesProtobuf(micro)).toMatchObject({ spec: { acquireTime: "1969-12-31T23:59:59.500000Z" } });
    const tooLate = envelope("v1", "Namespace", msg(1, time(8, 253_402_300_800)));
    expect(() => decodeKubernetesProtobuf(tooLate)).toThrow(/metadata.creationTimestamp: time out of range/);
  });

  it("decodes a core/v1 Event with MicroTime, ObjectReference and Time fields", () => {
    const body = envelope(
      "v1",
      "Event",
      msg(1, bytes(1, "pod.1"), bytes(3, "default")),
      msg(2, bytes(1, "Pod"), bytes(3, "pod"), bytes(4, "uid-1")),
      bytes(3, "Started"),
      msg(5, bytes(1, "kubelet")),
      time(6, 86_400),
      int(8, 2),
      bytes(9, "Normal"),
      time(10, 86_400, 1_000),
      msg(11, int(1, 2), time(2, 86_401, 2_500)),
      bytes(14, ""),
      bytes(15, ""),
    );
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "Event",
      apiVersion: "v1",
      metadata: { name: "pod.1", namespace: "default" },
      involvedObject: { kind: "Pod", name: "pod", uid: "uid-1" },
      reason: "Started",
      source: { component: "kubelet" },
      firstTimestamp: "1970-01-02T00:00:00Z",
      count: 2,
      type: "Normal",
      eventTime: "1970-01-02T00:00:00.000001Z",
      series: { count: 2, lastObservedTime: "1970-01-02T00:00:01.000002Z" },
      reportingComponent: "",
      reportingInstance: "",
    });
  });

  it("decodes TokenReview and SubjectAccessReview, whose extra values are named string lists", () => {
    const user = [
      bytes(1, "alice"),
      bytes(2, "u-1"),
      bytes(3, "devs"),
      entry(4, "scopes", msg(2, bytes(1, "a"), bytes(1, "b"))),
      entry(4, "none", msg(2)),
    ];
    const tokenReview = envelope(
      "authentication.k8s.io/v1",
      "TokenReview",
      msg(1),
      msg(2, bytes(1, "t0k"), bytes(2, "api")),
      msg(3, int(1, 1), msg(2, ...user), bytes(4, "api")),
    );
    expect(decodeKubernetesProtobuf(tokenReview)).toStrictEqual({
      kind: "TokenReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: {},
      spec: { token: "t0k", audiences: ["api"] },
      status: {
        authenticated: true,
        user: { username: "alice", uid: "u-1", groups: ["devs"], extra: { scopes: ["a", "b"], none: [] } },
        audiences: ["api"],
      },
    });
    const attributes = msg(
      1,
      bytes(1, "ns"),
      bytes(2, "list"),
      bytes(5, "pods"),
      msg(8, bytes(1, "spec.nodeName=n1"), msg(2, bytes(1, "spec.nodeName"), bytes(2, "In"), bytes(3, "n1"))),
      msg(9, bytes(1, "app=web")),
    );
    const sar = envelope(
      "authorization.k8s.io/v1",
      "SubjectAccessReview",
      msg(1),
      msg(2, attributes, bytes(3, "alice"), bytes(4, "devs"), entry(5, "scopes", msg(2, bytes(1, "a"))), bytes(6, "u-1")),
      msg(3, int(1, 0), bytes(2, "")),
    );
    expect(decodeKubernetesProtobuf(sar)).toStrictEqual({
      kind: "SubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: {},
      spec: {
        resourceAttributes: {
          namespace: "ns",
          verb: "list",
          resource: "pods",
          fieldSelector: {
            rawSelector: "spec.nodeName=n1",
            requirements: [{ key: "spec.nodeName", operator: "In", values: ["n1"] }],
          },
          labelSelector: { rawSelector: "app=web" },
        },
        user: "alice",
        groups: ["devs"],
        extra: { scopes: ["a"] },
        uid: "u-1",
      },
      status: { allowed: false },
    });
  });

  it("fills map entries that lack a key or a value with zero values", () => {
    const body = envelope(
      "v1",
      "Secret",
      msg(1, msg(11, bytes(2, "no-key")), msg(11, bytes(1, "no-value"))),
      msg(2, bytes(1, "empty")),
      entry(2, "bin", bytes(2, [0, 0xff])),
    );
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "Secret",
      apiVersion: "v1",
      metadata: { labels: { "": "no-key", "no-value": "" } },
      data: { empty: "", bin: "AP8=" },
    });
  });

  it("reads Quantity and IntOrString wrappers, including empty ones", () => {
    const body = envelope("v1", "ResourceQuota", msg(2, entry(1, "cpu", msg(2, bytes(1, "500m"))), entry(1, "pods", msg(2))));
    expect(decodeKubernetesProtobuf(body)).toMatchObject({ spec: { hard: { cpu: "500m", pods: "0" } } });
    const ports = [msg(1, int(3, 80), msg(4)), msg(1, int(3, 81), msg(4, int(1, 1), bytes(3, "web")))];
    const service = envelope("v1", "Service", msg(2, ...ports));
    expect(decodeKubernetesProtobuf(service)).toMatchObject({
      spec: {
        ports: [
          { port: 80, targetPort: 0 },
          { port: 81, targetPort: "web" },
        ],
      },
    });
  });

  it("merges a message field that occurs twice; the last scalar wins", () => {
    const first = msg(1, bytes(1, "a"), bytes(3, "ns"));
    const body = envelope("v1", "ConfigMap", first, msg(1, bytes(1, "b"), entry(11, "k", bytes(2, "v"))));
    expect(decodeKubernetesProtobuf(body)).toStrictEqual({
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: { name: "b", namespace: "ns", labels: { k: "v" } },
    });
  });

  it("keeps map keys such as __proto__ as plain keys, like JSON.parse", () => {
    const body = envelope("v1", "ConfigMap", entry(2, "__proto__", bytes(2, "x")));
    const object = decodeKubernetesProtobuf(body);
    expect(object).toStrictEqual(JSON.parse('{"kind":"ConfigMap","apiVersion":"v1","data":{"__proto__":"x"}}'));
    expect(Object.getPrototypeOf(object.data)).toBe(Object.prototype);
    expect(() => decodeKubernetesProtobuf(envelope("constructor", "Namespace"))).toThrow(UnsupportedProtobufKindError);
  });

  it("keeps strings byte for byte: a leading BOM stays, invalid UTF-8 becomes U+FFFD", () => {
    const body = envelope("v1", "ConfigMap", entry(2, "k", bytes(2, [0xef, 0xbb, 0xbf, 0x61, 0xff])));
    expect(decodeKubernetesProtobuf(body)).toMatchObject({ data: { k: "\ufeffa\ufffd" } });
  });

  it("skips fields it does not know, of every wire type, and reports where they were", () => {
    const body = envelope(
      "apps/v1",
      "Deployment",
      msg(1, bytes(1, "d"), int(99, 5), fixed64(98, 1n << 63n), fixed32(97, 7)),
      msg(2, msg(3, msg(2, msg(2, bytes(1, "c"), bytes(77, "future")), msg(2, bytes(1, "d"))))),
      bytes(42, "?"),
    );
    const { object, unknownFields } = decodeKubernetesProtobufWithDiagnostics(body);
    expect(object).toStrictEqual({
      kind: "Deployment",
      apiVersion: "apps/v1",
      metadata: { name: "d" },
      spec: { template: { spec: { containers: [{ name: "c" }, { name: "d" }] } } },
    });
    expect(unknownFields).toEqual(["metadata#99", "metadata#98", "metadata#97", "spec.template.spec.containers[0]#77", "#42"]);
  });

  it("refuses kinds it has no tables for, naming them", () => {
    const body = envelope("example.com/v1", "Widget", msg(1, bytes(1, "w")));
    expect(() => decodeKubernetesProtobuf(body)).toThrow(UnsupportedProtobufKindError);
    expect(() => decodeKubernetesProtobuf(body)).toThrow('kind "Widget" in "example.com/v1"');
    // A known kind under another group is still unknown.
    expect(() => decodeKubernetesProtobuf(envelope("apps/v1", "Namespace"))).toThrow(UnsupportedProtobufKindError);
  });

  it.each([
    ["no magic prefix", new Uint8Array([0x0a, 0x00]), /does not start with/],
    ["an empty body", new Uint8Array(0), /does not start with/],
    ["no kind", envelope("v1", ""), /has no kind/],
    ["no apiVersion", envelope("", "Namespace"), /Namespace object has no apiVersion/],
    ["a truncated length", envelope("v1", "Namespace").subarray(0, 20), /exceeds the remaining/],
    ["a truncated varint", new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x28, 0x80]), /end of data in varint/],
    ["an 11-byte varint", new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x28, ...Array(10).fill(0x80), 1]), /than 10/],
    ["a group (wire type 3)", envelope("v1", "Namespace", [...key(50, 3)]), /wire type 3/],
    ["field number 0", envelope("v1", "Namespace", [0x00, 0x00]), /field number 0/],
    ["a string sent as a varint", envelope("v1", "Namespace", msg(1, int(1, 5))), /metadata.name: wire type 0/],
    ["fieldsV1 that is not JSON", envelope("v1", "Namespace", msg(1, msg(17, msg(7, bytes(1, "{nope"))))), /not JSON/],
  ])("rejects %s", (_, body, message) => {
    expect(() => decodeKubernetesProtobuf(body)).toThrow(ProtobufDecodeError);
    expect(() => decodeKubernetesProtobuf(body)).toThrow(message);
  });

  it("recognises the magic prefix and names the media type", () => {
    expect(hasKubernetesProtobufMagic(envelope("v1", "Namespace"))).toBe(true);
    expect(hasKubernetesProtobufMagic(new TextEncoder().encode('{"kind":"Namespace"}'))).toBe(false);
    expect(PROTOBUF_CONTENT_TYPE).toBe("application/vnd.kubernetes.protobuf");
  });
});

describe("protobuf field tables", () => {
  const messages = compileMessages(messageTables);

  it("have a root message for every listed kind", () => {
    for (const kinds of Object.values(protobufKinds)) for (const kind of kinds) expect(messages.has(kind)).toBe(true);
  });

  it("order keys as Go declares them, with inline messages expanded", () => {
    expect(messages.get("Volume")?.order.slice(0, 4)).toEqual(["name", "hostPath", "emptyDir", "gcePersistentDisk"]);
    const probe = ["exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds"];
    expect(messages.get("Probe")?.order.slice(0, 5)).toEqual(probe);
  });

  it.each([
    [{ A: "1:x:B" }, /unknown message B/],
    [{ A: "1:x:string 1:y:string" }, /field 1 twice/],
    [{ A: "1:x:string 2:x:bool" }, /duplicate JSON names/],
    [{ A: "1:...:A" }, /inlines itself/],
    [{ A: "1:x:?B", B: "1:y:string" }, /only scalars take/],
    [{ A: "1:...:[]B", B: "1:y:string" }, /only a single message can be inline/],
    [{ A: "1:x:float" }, /bad type "float"/],
    [{ A: "x:y:string" }, /bad field/],
  ])("reject %j", (table, message) => {
    expect(() => compileMessages([table])).toThrow(message);
  });

  it("reject a message defined twice", () => {
    expect(() => compileMessages([{ A: "1:x:string" }, { A: "1:x:string" }])).toThrow(/defined twice/);
  });
});
