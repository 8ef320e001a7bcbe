// Strategic merge patch on Kubernetes' own examples: the cases of strategicpatch/patch_test.go (on its
// `MergeItem` test type, described here as a Shape with the same struct tags), the documented examples
// of sig-api-machinery/strategic-merge-patch.md, and the Status each malformed patch gets.
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  type ListShape,
  type ObjectShape,
  type Shape,
  StatusError,
  applyStrategicMergePatch,
  parseStrategicMergePatch,
  scalarShape,
} from "../src/index.js";

const object = (fields: Record<string, () => Shape>, extra: Partial<ObjectShape> = {}): ObjectShape => ({
  kind: "object",
  field: (name) => fields[name]?.(),
  ...extra,
});
const mergeList = (item: () => Shape, key: string): ListShape => ({
  kind: "list",
  get item() {
    return item();
  },
  listType: "map",
  listMapKeys: [key],
  patchStrategy: "merge",
  patchMergeKey: key,
});
const atomic = (item: () => Shape): ListShape => ({
  kind: "list",
  get item() {
    return item();
  },
  listType: "atomic",
});
const set: ListShape = { kind: "list", item: scalarShape, listType: "set", patchStrategy: "merge" };
const scalar = () => scalarShape;

// patch_test.go's MergeItem and RetainKeysMergeItem.
const mergeItem: ObjectShape = object({
  name: scalar,
  value: scalar,
  other: scalar,
  mergingList: () => mergeList(() => mergeItem, "name"),
  nonMergingList: () => atomic(() => mergeItem),
  mergingIntList: () => set,
  nonMergingIntList: () => atomic(scalar),
  simpleMap: () => ({ kind: "map", value: scalarShape }),
  retainKeysMap: () => retainKeysItem,
  retainKeysMergingList: () => ({ ...mergeList(() => mergeItem, "name"), patchStrategy: "merge,retainKeys" }),
});
const retainKeysItem: ObjectShape = object(
  {
    name: scalar,
    value: scalar,
    other: scalar,
    simpleMap: () => ({ kind: "map", value: scalarShape }),
    mergingIntList: () => set,
    mergingList: () => mergeList(() => mergeItem, "name"),
    nonMergingList: () => atomic(() => mergeItem),
  },
  { retainKeys: true },
);

// A pod spec with Kubernetes' tags (core/v1 types.go) and a Deployment's retainKeys strategy.
const container = object({
  name: scalar,
  image: scalar,
  command: () => atomic(scalar),
  ports: () => ({
    ...mergeList(() => object({ containerPort: scalar, protocol: scalar, name: scalar }), "containerPort"),
    listMapKeys: ["containerPort", "protocol"],
  }),
  env: () => mergeList(() => object({ name: scalar, value: scalar }), "name"),
});
const deployment = object({
  metadata: () => object({ name: scalar, labels: () => ({ kind: "map", value: scalarShape }), finalizers: () => set }),
  spec: () =>
    object({
      replicas: scalar,
      strategy: () =>
        object({ type: scalar, rollingUpdate: () => object({ maxSurge: scalar, maxUnavailable: scalar }) }, { retainKeys: true }),
      template: () =>
        object({
          spec: () =>
            object({
              containers: () => mergeList(() => container, "name"),
              volumes: () => ({
                ...mergeList(() => object({ name: scalar, emptyDir: () => object({}), hostPath: () => object({ path: scalar }) }), "name"),
                patchStrategy: "merge,retainKeys",
              }),
              tolerations: () => atomic(() => object({ key: scalar })),
            }),
        }),
    }),
});

const y = (text: string) => parse(text) as unknown;
const smp = (original: string, patch: string, shape: Shape = mergeItem) => applyStrategicMergePatch(y(original), y(patch), shape);

function statusOf(run: () => unknown) {
  try {
    run();
  } catch (e) {
    if (e instanceof StatusError) return e.status;
    throw e;
  }
  throw new Error("no error");
}

describe("patch_test.go: customStrategicMergePatchTestCaseData", () => {
  const cases: [string, string, string, string][] = [
    ["unique scalars when merging lists", "mergingIntList: [1, 2]", "mergingIntList: [2, 3]", "mergingIntList: [1, 2, 3]"],
    ["delete map from nested map", "simpleMap: {key1: 1, key2: 1}", "simpleMap: {$patch: delete}", "simpleMap: {}"],
    ["delete all items from merging list", "mergingList: [{name: 1}, {name: 2}]", "mergingList: [{$patch: replace}]", "mergingList: []"],
    ["merge empty merging lists", "mergingList: []", "mergingList: []", "mergingList: []"],
    ["delete all keys from map", "{name: 1, value: 1}", "$patch: replace", "{}"],
    ["add key and delete all keys from map", "{name: 1, value: 1}", "{other: a, $patch: replace}", "other: a"],
    [
      "delete all duplicate entries in a merging list",
      "mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3}, {name: 3}]",
      "mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]",
      "mergingList: [{name: 2, value: a}]",
    ],
    [
      "retainKeys map can add a field when no retainKeys directive present",
      "retainKeysMap: {name: foo}",
      "retainKeysMap: {value: bar}",
      "retainKeysMap: {name: foo, value: bar}",
    ],
    [
      "retainKeys map can delete a field when no retainKeys directive present",
      "retainKeysMap: {name: foo, value: a}",
      "retainKeysMap: {value: null}",
      "retainKeysMap: {name: foo}",
    ],
    [
      "retainKeys map merge an empty map",
      "retainKeysMap: {name: foo, value: a}",
      "retainKeysMap: {}",
      "retainKeysMap: {name: foo, value: a}",
    ],
    [
      "retainKeys list can change a field when no retainKeys directive present",
      "retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
      "retainKeysMergingList: [{name: foo, value: b}]",
      "retainKeysMergingList: [{name: bar}, {name: foo, value: b}]",
    ],
    [
      "preserve the order from the patch in a merging list",
      "mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
      "mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, other: x}]",
      "mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, value: b, other: x}]",
    ],
    [
      "preserve the order from the patch in a merging list 2",
      "mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
      "mergingList: [{name: 3, value: c}, {name: 1, value: a}]",
      "mergingList: [{name: 2, value: b}, {name: 3, value: c}, {name: 1, value: a}]",
    ],
    [
      "preserve the order from the patch in a merging int list",
      "mergingIntList: [1, 2, 3]",
      "mergingIntList: [3, 1, 2]",
      "mergingIntList: [3, 1, 2]",
    ],
    [
      "preserve the order from the patch in a merging int list (subset)",
      "mergingIntList: [1, 2, 3]",
      "mergingIntList: [3, 1]",
      "mergingIntList: [2, 3, 1]",
    ],
    [
      "$setElementOrder contains item that is not present in the list to be merged",
      "mergingList: [{name: 1}, {name: 3}]",
      "{$setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}], mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
      "mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]",
    ],
    [
      "$setElementOrder contains item that is not present in the int list",
      "mergingIntList: [1, 3]",
      "$setElementOrder/mergingIntList: [3, 2, 1]",
      "mergingIntList: [3, 1]",
    ],
    [
      "$deleteFromPrimitiveList of a missing item adds nothing",
      "mergingIntList: [1, 2]",
      "$deleteFromPrimitiveList/mergingIntList: [3]",
      "mergingIntList: [1, 2]",
    ],
    [
      "$deleteFromPrimitiveList on an empty list adds nothing",
      "mergingIntList:",
      "$deleteFromPrimitiveList/mergingIntList: [3]",
      "mergingIntList:",
    ],
    ["$deleteFromPrimitiveList on a missing list adds no list", "foo: [bar]", "$deleteFromPrimitiveList/mergingIntList: [3]", "foo: [bar]"],
    [
      "$deleteFromPrimitiveList on a merging list",
      "mergingIntList: [1, 2, 3]",
      "$deleteFromPrimitiveList/mergingIntList: [2]",
      "mergingIntList: [1, 3]",
    ],
    [
      "$deleteFromPrimitiveList on a list without merge strategy",
      "nonMergingIntList: [1, 2, 3]",
      "$deleteFromPrimitiveList/nonMergingIntList: [2]",
      "nonMergingIntList: [1, 3]",
    ],
  ];
  for (const [name, original, patch, result] of cases) {
    it(name, () => expect(smp(original, patch)).toEqual(y(result)));
  }
});

describe("patch_test.go: three-way patches applied to the live object", () => {
  const cases: [string, string, string, string][] = [
    ["nil original: add a field", "{name: 1, other: a}", "value: 1", "{name: 1, value: 1, other: a}"],
    [
      "delete field from nested map",
      "simpleMap: {key1: 1, key2: 1, other: a}",
      "simpleMap: {key2: null}",
      "simpleMap: {key1: 1, other: a}",
    ],
    ["replace list of scalars", "nonMergingIntList: [1, 4]", "nonMergingIntList: [2, 3]", "nonMergingIntList: [2, 3]"],
    [
      "delete all maps from merging list",
      "mergingList: [{name: 1, other: a}, {name: 2, other: b}]",
      "mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
      "mergingList: []",
    ],
    [
      "delete all maps from empty merging list",
      "mergingList: []",
      "mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
      "mergingList: []",
    ],
    ["defined null values remove live fields", "{name: a, other: a}", "{name: 1, value: 1, other: null}", "{name: 1, value: 1}"],
    [
      "delete items in lists of scalars",
      "mergingIntList: [1, 2, 3, 4]",
      "{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
      "mergingIntList: [1, 2, 4]",
    ],
    [
      "delete all duplicate items in lists of scalars",
      "mergingIntList: [1, 2, 3, 3, 4]",
      "{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
      "mergingIntList: [1, 2, 4]",
    ],
    [
      "merge lists of maps",
      "mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
      "{$setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}], mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]}",
      "mergingList: [{name: 4, value: 4}, {name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
    ],
    [
      "merge lists of maps with conflict",
      "mergingList: [{name: 1, other: a}, {name: 2, value: 3, other: b}]",
      "{$setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}], mergingList: [{name: 2, value: 2}, {name: 3, value: 3}]}",
      "mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
    ],
    [
      "add field to map in merging list",
      "mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
      "{$setElementOrder/mergingList: [{name: 1}, {name: 2}], mergingList: [{name: 1, value: 1}]}",
      "mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]",
    ],
    [
      "retainKeys map should clear defaulted field",
      "retainKeysMap: {value: foo}",
      "retainKeysMap: {$retainKeys: [other], other: bar}",
      "retainKeysMap: {other: bar}",
    ],
    [
      "retainKeys map should clear defaulted field with conflict (discriminated union)",
      "retainKeysMap: {name: type1, value: foo}",
      "retainKeysMap: {$retainKeys: [name, other], name: type2, other: bar}",
      "retainKeysMap: {name: type2, other: bar}",
    ],
  ];
  for (const [name, current, patch, result] of cases) {
    it(name, () => expect(smp(current, patch)).toEqual(y(result)));
  }
});

describe("the documented examples (sig-api-machinery/strategic-merge-patch.md)", () => {
  const pod = "spec: {template: {spec: {containers: [{name: nginx, image: nginx-1.0}]}}}";

  it("containers merge by name: a patch adds a container instead of replacing the list", () => {
    const r = smp(pod, "spec: {template: {spec: {containers: [{name: log-tailer, image: log-tailer-1.0}]}}}", deployment);
    // Without `$setElementOrder`, an item the live list lacks goes before the live-only items (Go's mergeSortedSlice).
    expect(r).toEqual(
      y("spec: {template: {spec: {containers: [{name: log-tailer, image: log-tailer-1.0}, {name: nginx, image: nginx-1.0}]}}}"),
    );
    const ordered = smp(
      pod,
      "spec: {template: {spec: {$setElementOrder/containers: [{name: nginx}, {name: log-tailer}], containers: [{name: log-tailer, image: log-tailer-1.0}]}}}",
      deployment,
    );
    expect(ordered).toEqual(
      y("spec: {template: {spec: {containers: [{name: nginx, image: nginx-1.0}, {name: log-tailer, image: log-tailer-1.0}]}}}"),
    );
  });

  it("$patch: replace on a map takes the map literally", () => {
    const live = "spec: {template: {spec: {containers: [{name: a, image: x}], tolerations: [{key: k}]}}}";
    const r = smp(live, "spec: {template: {spec: {$patch: replace, containers: [{name: nginx, image: nginx-1.0}]}}}", deployment);
    expect(r).toEqual(y("spec: {template: {spec: {containers: [{name: nginx, image: nginx-1.0}]}}}"));
  });

  it("$patch: replace in a list of maps replaces the list", () => {
    const live = "spec: {template: {spec: {containers: [{name: a, image: x}, {name: nginx, image: old}]}}}";
    const r = smp(live, "spec: {template: {spec: {containers: [{name: nginx, image: nginx-1.0}, {$patch: replace}]}}}", deployment);
    expect(r).toEqual(y(pod));
  });

  it("$patch: delete in a list deletes the item with that merge key", () => {
    const live = "spec: {template: {spec: {containers: [{name: nginx, image: nginx-0.9}, {name: log-tailer, image: t}]}}}";
    const r = smp(
      live,
      "spec: {template: {spec: {containers: [{name: nginx, image: nginx-1.0}, {$patch: delete, name: log-tailer}]}}}",
      deployment,
    );
    expect(r).toEqual(y(pod));
  });

  it("$patch: delete on a map deletes it, as null does", () => {
    const live = "spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}";
    expect(smp(live, "spec: {strategy: {rollingUpdate: {$patch: delete}}}", deployment)).toEqual(
      y("spec: {strategy: {type: RollingUpdate, rollingUpdate: {}}}"),
    );
    expect(smp(live, "spec: {strategy: {rollingUpdate: null}}", deployment)).toEqual(y("spec: {strategy: {type: RollingUpdate}}"));
  });

  it("$deleteFromPrimitiveList/finalizers deletes from the set", () => {
    const r = smp("metadata: {finalizers: [a, b, c]}", "metadata: {$deleteFromPrimitiveList/finalizers: [b, c]}", deployment);
    expect(r).toEqual(y("metadata: {finalizers: [a]}"));
  });

  it("finalizers merge as a set", () => {
    const r = smp("metadata: {finalizers: [a, b]}", "metadata: {finalizers: [b, c]}", deployment);
    expect(r).toEqual(y("metadata: {finalizers: [a, b, c]}"));
  });

  it("$setElementOrder reorders a list of primitives and a list of maps", () => {
    expect(smp("metadata: {finalizers: [a, b, c]}", "metadata: {$setElementOrder/finalizers: [b, c, a]}", deployment)).toEqual(
      y("metadata: {finalizers: [b, c, a]}"),
    );
    const live = "spec: {template: {spec: {containers: [{name: a, image: 1}, {name: b, image: 2}, {name: c, image: 3}]}}}";
    const r = smp(live, "spec: {template: {spec: {$setElementOrder/containers: [{name: b}, {name: c}, {name: a}]}}}", deployment);
    expect(r).toEqual(y("spec: {template: {spec: {containers: [{name: b, image: 2}, {name: c, image: 3}, {name: a, image: 1}]}}}"));
  });

  it("$retainKeys on a Deployment's strategy clears rollingUpdate when switching to Recreate", () => {
    const live = "spec: {replicas: 2, strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}}";
    const r = smp(live, "spec: {strategy: {$retainKeys: [type], type: Recreate}}", deployment);
    expect(r).toEqual(y("spec: {replicas: 2, strategy: {type: Recreate}}"));
  });

  it("$retainKeys inside a volume (merge,retainKeys) switches its source", () => {
    const live = "spec: {template: {spec: {volumes: [{name: data, emptyDir: {}}, {name: other, emptyDir: {}}]}}}";
    const r = smp(
      live,
      "spec: {template: {spec: {volumes: [{name: data, $retainKeys: [hostPath, name], hostPath: {path: /x}}]}}}",
      deployment,
    );
    expect(r).toEqual(y("spec: {template: {spec: {volumes: [{name: data, hostPath: {path: /x}}, {name: other, emptyDir: {}}]}}}"));
  });

  it("container ports merge by containerPort and env by name; command is atomic", () => {
    const live = `spec: {template: {spec: {containers: [{name: web, image: nginx, command: [a, b],
      ports: [{containerPort: 80, name: http}, {containerPort: 443}], env: [{name: A, value: "1"}, {name: B, value: "2"}]}]}}}`;
    const patch = `spec: {template: {spec: {containers: [{name: web, command: [c],
      ports: [{containerPort: 8080}, {containerPort: 80, name: web}], env: [{name: B, value: "3"}, {name: A, $patch: delete}]}]}}}`;
    const r = smp(live, patch, deployment) as any;
    const web = r.spec.template.spec.containers[0];
    expect(web.command).toEqual(["c"]);
    // Patch items first in the patch's order; the live-only item after the last patch item it followed.
    expect(web.ports).toEqual([{ containerPort: 8080 }, { containerPort: 80, name: "web" }, { containerPort: 443 }]);
    expect(web.env).toEqual([{ name: "B", value: "3" }]);
  });

  it("a new subtree is taken from the patch without its nulls and $patch items", () => {
    const r = smp(
      "spec: {replicas: 1}",
      "spec: {template: {spec: {containers: [{name: a, image: null}, {name: b, $patch: delete}]}}}",
      deployment,
    );
    expect(r).toEqual(y("spec: {replicas: 1, template: {spec: {containers: [{name: a}]}}}"));
  });

  it("a null patch changes nothing and the original is not modified", () => {
    const original = y("spec: {replicas: 1}");
    expect(applyStrategicMergePatch(original, null, deployment)).toEqual(original);
    applyStrategicMergePatch(original, y("spec: {replicas: 3}"), deployment);
    expect(original).toEqual(y("spec: {replicas: 1}"));
  });
});

describe("malformed patches get Kubernetes' status", () => {
  const generic422 = {
    code: 422,
    reason: "Invalid",
    message: "the server rejected our request due to an error in our request",
    details: {},
  };

  it("a patch that is not an object → 400 with Go's decoding error", () => {
    for (const [patch, kind] of [
      [[], "array"],
      ["x", "string"],
      [1, "number"],
      [true, "bool"],
    ] as const) {
      expect(statusOf(() => applyStrategicMergePatch({}, patch, mergeItem))).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
      });
    }
  });

  it("an item without its merge key → 500 naming the map and the key", () => {
    const s = statusOf(() => smp("mergingList: [{name: 1, value: a}]", "mergingList: [{value: b}]"));
    expect(s).toMatchObject({ code: 500, message: "map: map[value:b] does not contain declared merge key: name" });
    expect(s.reason).toBe("");
  });

  it("$setElementOrder out of step with the patch list → 500", () => {
    const s = statusOf(() =>
      smp(
        "mergingList: [{name: 1}, {name: 3}, {name: 2}]",
        "{$setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}], mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]}",
      ),
    );
    expect(s.code).toBe(500);
    expect(s.message).toBe(
      "the order in patch list:\n[map[name:3 value:3] map[name:1 value:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]",
    );
  });

  it("$retainKeys that is not a list, or omits a patched field → 400", () => {
    for (const patch of ["retainKeysMap: {$retainKeys: name}", "retainKeysMap: {$retainKeys: [name], value: x}"]) {
      expect(statusOf(() => smp("retainKeysMap: {name: a}", patch))).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: "invalid patch format of retainKeys",
      });
    }
  });

  it("a directive key without its list name → 400", () => {
    expect(statusOf(() => smp("mergingIntList: [1]", "$deleteFromPrimitiveList: [1]"))).toMatchObject({
      code: 400,
      message: "invalid patch format of primitive list",
    });
    expect(statusOf(() => smp("mergingIntList: [1]", "$setElementOrderX/mergingIntList: [1]"))).toMatchObject({
      code: 400,
      message: "invalid patch format of setElementOrder list",
    });
  });

  it("lists of lists → the generic 422", () => {
    expect(statusOf(() => smp("mergingIntList: [1]", "mergingIntList: [[2]]"))).toMatchObject({ code: 500 });
    expect(statusOf(() => smp("mergingIntList: []", "mergingIntList: [[2]]"))).toMatchObject(generic422);
  });

  it("items of different types → 500", () => {
    expect(statusOf(() => smp("mergingIntList: [1]", "mergingIntList: [a]"))).toMatchObject({
      code: 500,
      message: "list element types are not identical: [[1] [a]]",
    });
  });

  it("$patch: merge, or an unknown directive → 500", () => {
    expect(statusOf(() => smp("mergingList: [{name: 1}]", "mergingList: [{name: 1, $patch: merge}]"))).toMatchObject({
      code: 500,
      message: "merging lists cannot yet be specified in the patch",
    });
    expect(statusOf(() => smp("simpleMap: {a: b}", "simpleMap: {$patch: merge, a: c}"))).toMatchObject({
      code: 500,
      message: "unknown patch type: merge in map: map[$patch:merge a:c]",
    });
    expect(statusOf(() => smp("mergingList: [{name: 1}]", "mergingList: [{name: 1, $patch: 7}]"))).toMatchObject({
      code: 500,
      message: "unknown patch type: %!s(int64=7) in map: map[$patch:7 name:1]",
    });
  });

  it("$setElementOrder that is not a list → 500", () => {
    expect(statusOf(() => smp("mergingIntList: [1]", "$setElementOrder/mergingIntList: x"))).toMatchObject({
      code: 500,
      message: "expected a []interface {}, but received a string",
    });
  });

  it("objects in a set list → 500 (no merge key)", () => {
    expect(statusOf(() => smp("mergingIntList: []", "mergingIntList: [{a: 1}]"))).toMatchObject({
      code: 500,
      message: "cannot merge lists without merge key for string",
    });
  });
});

describe("malformed JSON → 400 with encoding/json's message", () => {
  const cases: [string, string][] = [
    ["", "unexpected end of JSON input"],
    ["{nope", "invalid character 'n' looking for beginning of object key string"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"],
    ["[1 2]", "invalid character '2' after array element"],
    ['{"a": tru}', "invalid character '}' in literal true (expecting 'e')"],
    ['{"a": -x}', "invalid character 'x' in numeric literal"],
    ['{"a": 1.}', "invalid character '}' after decimal point in numeric literal"],
    ['{"a": "\\q"}', "invalid character 'q' in string escape code"],
    ["{} {}", "invalid character '{' after top-level value"],
    ["'x'", "invalid character '\\'' looking for beginning of value"],
    ['{"a": [1,', "unexpected end of JSON input"],
  ];
  for (const [text, message] of cases) {
    it(JSON.stringify(text), () => {
      expect(statusOf(() => parseStrategicMergePatch(text))).toMatchObject({ code: 400, reason: "BadRequest", message });
    });
  }
});
