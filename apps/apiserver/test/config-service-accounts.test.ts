// The service account settings read from the environment, with Kubernetes' bounds.
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";

const sa = (env: NodeJS.ProcessEnv) => configFromEnv(env).serviceAccounts!;

describe("service account configuration", () => {
  it("defaults: the profile's issuer, the issuer as audience, a day at most, discovery for authenticated callers", () => {
    expect(sa({})).toEqual({ audiences: [], maxExpirationSeconds: 86_400, publicDiscovery: false });
  });

  it("reads every variable", () => {
    expect(
      sa({
        ORCH_SA_ISSUER: "https://issuer.example",
        ORCH_API_AUDIENCES: "api, vault,",
        ORCH_SA_MAX_EXPIRATION_SECONDS: "0",
        ORCH_SA_JWKS_URI: "https://keys.example/jwks",
        ORCH_SA_DISCOVERY_PUBLIC: "TRUE",
      }),
    ).toEqual({
      issuer: "https://issuer.example",
      audiences: ["api", "vault"],
      maxExpirationSeconds: 0,
      jwksUri: "https://keys.example/jwks",
      publicDiscovery: true,
    });
  });

  it("refuses a maximum under an hour or over 2^32 s, an issuer with a colon that is no URL, a bad flag", () => {
    expect(() => sa({ ORCH_SA_MAX_EXPIRATION_SECONDS: "600" })).toThrow(/0 \(no limit\) or between 3600 and 2\^32/);
    expect(() => sa({ ORCH_SA_MAX_EXPIRATION_SECONDS: String(2 ** 32 + 1) })).toThrow(/ORCH_SA_MAX_EXPIRATION_SECONDS/);
    expect(() => sa({ ORCH_SA_ISSUER: "://no-scheme" })).toThrow(/not a URL/);
    expect(sa({ ORCH_SA_ISSUER: "orch" }).issuer).toBe("orch");
    expect(() => sa({ ORCH_SA_DISCOVERY_PUBLIC: "yes" })).toThrow(/ORCH_SA_DISCOVERY_PUBLIC/);
  });
});
