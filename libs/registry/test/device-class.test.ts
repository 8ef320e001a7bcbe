// DeviceClass update rules that the HTTP API cannot set up: stored parameters over 10 Ki are not
// re-checked (Kubernetes' "stored" parameters), anything changed is; selectors always are.
import { namingProfile, type ObjectHeader } from "@orch/api";
import { describe, expect, it } from "vitest";
import type { RequestContext } from "../src/index.js";
import { deviceClasses } from "../src/kinds/resource/device-class.js";

const profile = namingProfile("orch");
const strategy = deviceClasses(profile).strategy;
const ctx = (): RequestContext => ({ user: { username: "test", groups: [] }, profile, warnings: [] });
const dc = (spec: Record<string, unknown>): ObjectHeader => ({ metadata: { name: "gpu" }, spec });
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

// Neither could be created today: an expression that does not compile, parameters over 10 Ki.
const oldSelectors = [{ cel: { expression: "device.retired == true" } }];
const oldConfig = [{ opaque: { driver: "gpu.example.com", parameters: { blob: "x".repeat(11 * 1024) } } }];

describe("DeviceClass update validation", () => {
  it("an unchanged selector list is compiled again, as Kubernetes 1.32 does in its stored-expressions environment", () => {
    const old = dc({ selectors: oldSelectors });
    expect(fields(strategy.validate!(old, ctx()))).toEqual(["spec.selectors[0].cel.expression"]);
    const relabelled = dc({ selectors: oldSelectors, extendedResourceName: "example.com/gpu" });
    expect(fields(strategy.validateUpdate!(relabelled, old, ctx()))).toEqual(["spec.selectors[0].cel.expression"]);
    const replaced = dc({ selectors: [{ cel: { expression: "true" } }] });
    expect(strategy.validateUpdate!(replaced, old, ctx())).toEqual([]);
  });

  it("unchanged config keeps parameters over 10 Ki; changed config is checked", () => {
    const old = dc({ config: oldConfig });
    expect(fields(strategy.validate!(old, ctx()))).toEqual(["spec.config[0].opaque.parameters"]);
    expect(strategy.validateUpdate!(dc({ config: oldConfig, selectors: [] }), old, ctx())).toEqual([]);
    const changed = dc({ config: [...oldConfig, { opaque: { driver: "nic.example.com", parameters: {} } }] });
    expect(fields(strategy.validateUpdate!(changed, old, ctx()))).toEqual(["spec.config[0].opaque.parameters"]);
  });

  it("a stored config is still checked for its driver and its shape", () => {
    const bad = [{ opaque: { driver: "", parameters: [] } }];
    expect(fields(strategy.validateUpdate!(dc({ config: bad }), dc({ config: bad }), ctx()))).toEqual([
      "spec.config[0].opaque.driver",
      "spec.config[0].opaque.parameters",
    ]);
  });
});
