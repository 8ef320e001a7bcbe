// The environment whoever starts the apiserver adds: glibc's malloc settings, merged with the caller's tunables.
import { describe, expect, it } from "vitest";
import { apiserverEnvironment } from "../src/process-environment.js";

const OURS = "glibc.malloc.mmap_threshold=65536:glibc.malloc.hugetlb=1";

describe("apiserverEnvironment", () => {
  it("sets the malloc tunables and keeps the rest of the environment", () => {
    expect(apiserverEnvironment({ ORCH_PORT: "6443" })).toEqual({ ORCH_PORT: "6443", GLIBC_TUNABLES: OURS });
  });

  it("adds them to the caller's own tunables", () => {
    expect(apiserverEnvironment({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }).GLIBC_TUNABLES).toBe(`glibc.malloc.arena_max=2:${OURS}`);
  });

  it("leaves a value the caller chose for one of them as it is", () => {
    expect(apiserverEnvironment({ GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=131072" }).GLIBC_TUNABLES).toBe(
      "glibc.malloc.mmap_threshold=131072:glibc.malloc.hugetlb=1",
    );
    expect(apiserverEnvironment({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=0:glibc.malloc.mmap_threshold=0" }).GLIBC_TUNABLES).toBe(
      "glibc.malloc.hugetlb=0:glibc.malloc.mmap_threshold=0",
    );
  });
});
