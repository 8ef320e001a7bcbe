// DeviceClass update rules that the HTTP API cannot set up: what is already stored is not re-checked
// (Kubernetes' "stored" expressions and parameters), anything changed is.
import { namingProfile, type ObjectHeader } from "@orch/api";
import { describe, expect, it } from "vitest";
import type { RequestContext } from "../src/index.js";
import { deviceClasses } from "../src/kinds/resource/device-class.js";

const profile = namingProfile("orch");
const strategy = deviceClasses(profile).strategy;
const ctx = (): RequestContext => ({ user: { username: "test", groups: [] }, profile, warnings: [] });
const dc = (spec: Record<string, unknown>): ObjectHeader => ({ metadata: { name: "gpu" }, spec });
const fields = (errs: { field: string }[]) => errs.map((e) => e.field);

// Neither could be created today: an expression that no longer compiles, parameters over 10 Ki.
const oldSelectors = [{ cel: { expression: "device.retired == true" } }];
const oldConfig = [{ opaque: { driver: "gpu.example.com", parameters: { blob: "x".repeat(11 * 1024) } } }];

describe("DeviceClass update validation", () => {
  it("an unchanged selector list is not compiled again", () => {
    const old = dc({ selectors: oldSelectors });
    expect(fields(strategy.validate!(old, ctx()))).toEqual(["spec.selectors[0].cel.expression"]);
    expect(strategy.validateUpdate!(dc({ selectors: oldSelectors, extendedResourceName: "example.com/gpu" }), old, ctx())).toEqual([]);
    // Any change to the list (here: reordering) validates every expression as new.
    const reordered = dc({ selectors: [{ cel: { expression: "true" } }, ...oldSelectors] });
    expect(fields(strategy.validateUpdate!(reordered, old, ctx()))).toEqual(["spec.selectors[1].cel.expression"]);
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
