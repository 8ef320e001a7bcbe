import { describe, expect, it } from "vitest";
import { createLogger, formatLine } from "../src/index.js";

function capture(level?: string) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("apiserver", { level, destination: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

describe("createLogger", () => {
  it("writes one JSON object per line: level, time, name, msg and the fields", () => {
    const { log, lines } = capture();
    log.info("request", { verb: "get", code: 200 });
    expect(lines).toEqual([
      { level: "info", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), name: "apiserver", msg: "request", verb: "get", code: 200 },
    ]);
  });

  it("names a component by its path, and drops what is below the level", () => {
    const { log, lines } = capture("warn");
    const gc = log.child("garbage-collector");
    gc.info("dropped");
    gc.warn("kept");
    expect(lines.map((l) => [l.level, l.name, l.msg])).toEqual([["warn", "apiserver/garbage-collector", "kept"]]);
    expect(gc.enabled("info")).toBe(false);
  });

  it("logs an error's message and stack, and an API answer's message alone", () => {
    const { log, lines } = capture();
    log.error("pass failed", new TypeError("boom"));
    class ApiError extends Error {
      override name = "ApiError";
    }
    log.error("write refused", new ApiError("conflict"));
    expect(lines[0]!.err).toMatchObject({ type: "TypeError", message: "boom", stack: expect.stringContaining("TypeError: boom") });
    expect(lines[1]!.err).toEqual({ type: "ApiError", message: "conflict" });
  });
});

describe("formatLine", () => {
  it("prints a log line as text, and any other line as it is", () => {
    expect(formatLine('{"level":"info","time":"t","name":"apiserver","msg":"serving","port":6443}')).toBe("apiserver: serving port=6443");
    expect(formatLine('{"level":"error","time":"t","name":"x","msg":"failed","err":{"message":"boom"}}')).toBe("ERROR x: failed: boom");
    expect(formatLine("[INF] nats-server ready")).toBe("[INF] nats-server ready");
  });
});
