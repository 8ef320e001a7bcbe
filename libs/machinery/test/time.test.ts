import { afterEach, describe, expect, it, vi } from "vitest";
import { rfc3339, rfc3339Micro } from "../src/index.js";

describe("rfc3339", () => {
  afterEach(() => vi.useRealTimers());

  it("formats a given time to the second, in UTC", () => {
    expect(rfc3339(new Date("2026-11-27T16:05:09.987+02:00"))).toBe("2026-11-27T14:05:09Z");
    expect(rfc3339Micro(new Date("2026-11-27T14:05:09.987Z"))).toBe("2026-11-27T14:05:09.987000Z");
  });

  it("answers the current second, and the next one once the clock reaches it", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-27T14:05:09.001Z"));
    expect(rfc3339()).toBe("2026-11-27T14:05:09Z");
    vi.setSystemTime(new Date("2026-11-27T14:05:09.999Z"));
    expect(rfc3339()).toBe("2026-11-27T14:05:09Z");
    vi.setSystemTime(new Date("2026-11-27T14:05:10.000Z"));
    expect(rfc3339()).toBe("2026-11-27T14:05:10Z");
    // A clock set back is followed too.
    vi.setSystemTime(new Date("2025-01-01T00:00:00.500Z"));
    expect(rfc3339()).toBe("2025-01-01T00:00:00Z");
  });
});
