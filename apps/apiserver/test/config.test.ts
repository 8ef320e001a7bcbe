// The environment of the contract, read into the apiserver's settings.
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";

describe("configFromEnv", () => {
  it("has the contract's defaults", () => {
    const c = configFromEnv({});
    expect(c.port).toBe(6443);
    expect(c.bind).toBe("127.0.0.1");
    expect(c.bus).toBeUndefined();
    expect(c.profile.name).toBe("orch");
    expect(c.events).toEqual({ maxMessages: 1_000_000, maxAgeMs: 86_400_000, replicas: 1 });
  });

  it("takes the address clients use through a load balancer (ORCH_EXTERNAL_URL) as an https origin only", () => {
    expect(configFromEnv({}).externalUrl).toBeUndefined();
    expect(configFromEnv({ ORCH_EXTERNAL_URL: "https://lb.example:6443/" }).externalUrl).toBe("https://lb.example:6443");
    expect(configFromEnv({ ORCH_EXTERNAL_URL: "https://10.0.0.5" }).externalUrl).toBe("https://10.0.0.5");
    for (const bad of ["http://lb:6443", "lb:6443", "https://lb:6443/api", "https://user@lb:6443"]) {
      expect(() => configFromEnv({ ORCH_EXTERNAL_URL: bad })).toThrow(/ORCH_EXTERNAL_URL must be an https/);
    }
  });

  it("bounds the NATS event history, and sets its replicas, from the environment", () => {
    const c = configFromEnv({ ORCH_EVENTS_MAX_MESSAGES: "5000", ORCH_EVENTS_MAX_AGE_SECONDS: "600", ORCH_EVENTS_REPLICAS: "3" });
    expect(c.events).toEqual({ maxMessages: 5000, maxAgeMs: 600_000, replicas: 3 });
  });

  it("takes the Service ranges (--service-cluster-ip-range, --service-node-port-range) and refuses malformed ones", () => {
    const c = configFromEnv({ ORCH_SERVICE_CLUSTER_IP_RANGE: "10.100.0.7/28", ORCH_SERVICE_NODE_PORT_RANGE: "30000-30015" });
    expect(c.serviceClusterIPRange).toBe("10.100.0.0/28");
    expect(c.serviceNodePortRange).toEqual({ first: 30000, last: 30015 });
    for (const bad of ["30015-30000", "0-10", "30000-70000", "30000", "a-b"])
      expect(() => configFromEnv({ ORCH_SERVICE_NODE_PORT_RANGE: bad })).toThrow(/service node port range .* is not first-last/);
  });

  it("refuses values that are not non-negative integers", () => {
    expect(() => configFromEnv({ ORCH_EVENTS_MAX_MESSAGES: "lots" })).toThrow(/ORCH_EVENTS_MAX_MESSAGES must be a non-negative integer/);
    expect(() => configFromEnv({ ORCH_PROFILE: "k8s" })).toThrow(/ORCH_PROFILE must be "orch" or "kubernetes"/);
  });
});
