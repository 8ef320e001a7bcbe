// The environment whoever starts the apiserver adds: glibc's malloc threshold, merged with the caller's tunables.
import { describe, expect, it } from "vitest";
import { apiserverEnvironment } from "../src/process-environment.js";

describe("apiserverEnvironment", () => {
  it("sets the malloc threshold and keeps the rest of the environment", () => {
    expect(apiserverEnvironment({ ORCH_PORT: "6443" })).toEqual({ ORCH_PORT: "6443", GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=65536" });
  });

  it("adds it to the caller's own tunables", () => {
    expect(apiserverEnvironment({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }).GLIBC_TUNABLES).toBe(
      "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536",
    );
  });

  it("leaves a threshold the caller chose as it is", () => {
    for (const tunables of ["glibc.malloc.mmap_threshold=131072", "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=0"]) {
      expect(apiserverEnvironment({ GLIBC_TUNABLES: tunables }).GLIBC_TUNABLES).toBe(tunables);
    }
  });
});
