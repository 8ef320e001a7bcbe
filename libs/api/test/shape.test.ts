import { describe, expect, it } from "vitest";
import { type ListShape, type ObjectShape, type Shape, memberShape } from "@orch/machinery";
import { Deployment, PodSpec, crdSchemaFor, shapeOf } from "../src/index.js";

const at = (shape: Shape, ...path: string[]): Shape => path.reduce(memberShape, shape);

describe("shapeOf", () => {
  it("describes pod spec lists with Kubernetes' merge keys and strategies", () => {
    const pod = shapeOf(PodSpec);
    const containers = at(pod, "containers") as ListShape;
    expect(containers).toMatchObject({ kind: "list", listType: "map", listMapKeys: ["name"], patchMergeKey: "name" });
    expect(at(containers.item, "ports")).toMatchObject({ kind: "list", listMapKeys: ["containerPort", "protocol"] });
    expect(at(containers.item, "command")).toMatchObject({ kind: "list", listType: "atomic" });
    expect(at(pod, "volumes")).toMatchObject({ patchStrategy: "merge,retainKeys" });
    expect(at(pod, "nodeSelector")).toMatchObject({ kind: "map", value: { kind: "scalar" } });
  });

  it("marks a Deployment's strategy as retainKeys and knows its members", () => {
    const strategy = at(shapeOf(Deployment), "spec", "strategy") as ObjectShape;
    expect(strategy.kind).toBe("object");
    expect(strategy.retainKeys).toBe(true);
    expect(strategy.field("rollingUpdate")?.kind).toBe("object");
    expect(strategy.field("nope")).toBeUndefined();
  });

  it("walks recursive schemas lazily", () => {
    const crd = shapeOf(crdSchemaFor("x-orch").CustomResourceDefinition);
    const props = at(crd, "spec", "versions");
    expect(props.kind).toBe("list");
    const schema = at((props as ListShape).item, "schema", "openAPIV3Schema", "properties", "spec", "properties", "a", "type");
    expect(schema.kind).toBe("scalar");
  });
});
