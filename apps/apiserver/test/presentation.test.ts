// Pure pieces of the HTTP layer: version ordering in discovery, Kubernetes' human durations, media types.
import { describe, expect, it } from "vitest";
import { compareVersions, wantsAggregated } from "../src/http/discovery.js";
import { negotiate } from "../src/http/negotiation.js";
import { humanDuration } from "../src/http/table.js";

describe("discovery version order", () => {
  it("sorts GA before beta before alpha, higher first, others last", () => {
    const versions = ["v1alpha1", "foo1", "v2beta1", "v1", "v11alpha2", "v1beta1", "v2", "foo10", "v10beta3", "v12alpha1"];
    expect(versions.sort(compareVersions)).toEqual([
      "v2",
      "v1",
      "v10beta3",
      "v2beta1",
      "v1beta1",
      "v12alpha1",
      "v11alpha2",
      "v1alpha1",
      "foo1",
      "foo10",
    ]);
  });

  it("recognises the aggregated discovery Accept kubectl sends", () => {
    expect(
      wantsAggregated(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
      ),
    ).toBe(true);
    expect(wantsAggregated("application/json, */*")).toBe(false);
    expect(wantsAggregated("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")).toBe(false);
  });
});

describe("human durations", () => {
  it.each([
    [0, "0s"],
    [59_000, "59s"],
    [119_000, "119s"],
    [125_000, "2m5s"],
    [600_000, "10m"],
    [3 * 3600_000 + 5 * 60_000, "3h5m"],
    [10 * 3600_000, "10h"],
    [50 * 3600_000, "2d2h"],
    [30 * 86400_000, "30d"],
    [800 * 86400_000, "2y70d"],
  ])("%d ms is %s", (ms, text) => expect(humanDuration(ms)).toBe(text));
});

describe("response negotiation", () => {
  it("serves the first acceptable media range", () => {
    expect(negotiate(undefined)).toEqual({ type: "application/json" });
    expect(negotiate("application/vnd.kubernetes.protobuf, application/json")).toEqual({ type: "application/json" });
    expect(negotiate("application/yaml")).toEqual({ type: "application/yaml" });
    expect(
      negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
    ).toEqual({ type: "application/json", as: "Table" });
  });

  it("refuses what it cannot produce with 406", () => {
    expect(() => negotiate("application/vnd.kubernetes.protobuf")).toThrowError(/only the following media types are accepted/);
    expect(() => negotiate("text/html")).toThrowError(/only the following media types are accepted/);
  });
});
