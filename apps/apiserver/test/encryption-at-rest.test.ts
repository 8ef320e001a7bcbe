// Secrets encrypted at rest, end to end: the real apiserver on a SQLite file, driven by the real kubectl.
// What a copied database file shows, the default configuration, Kubernetes' rotation procedure step by
// step, and what a read answers once the key a Secret was written with is gone.
import Database from "better-sqlite3";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";
import { startApiserver } from "../src/server.js";
import { type TestServer, startTestServer, testLog } from "./harness.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A shell command line with kubectl pointed at the test server (a pipe needs the shell). */
function sh(t: TestServer, command: string): Promise<Run> {
  return new Promise((resolve) =>
    execFile(
      "sh",
      ["-c", command],
      {
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, KUBECONFIG: t.server.kubeconfigPath, KUBECACHEDIR: join(t.dataDir, "kubectl-cache") },
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function kubectl(t: TestServer, args: string): Promise<string> {
  const r = await sh(t, `kubectl ${args}`);
  if (r.code !== 0) throw new Error(`kubectl ${args}: ${r.stderr}`);
  return r.stdout;
}

/** A value nobody else writes, so finding it in a file can only mean this Secret leaked. */
const marker = (label: string) => `${label}-${randomBytes(12).toString("hex")}`;

/** Whether any of the database's files holds the text or its base64 (the form a Secret's data has in JSON). */
function leaked(t: TestServer, value: string): string[] {
  const forms = [value, Buffer.from(value).toString("base64")];
  return ["orch.db", "orch.db-wal"]
    .map((f) => join(t.dataDir, f))
    .filter((file) => existsSync(file))
    .flatMap((file) => {
      const bytes = readFileSync(file);
      return forms.filter((form) => bytes.includes(form)).map((form) => `${file}: ${form}`);
    });
}

/** How each Secret's current value starts in the database, by namespace/name: the provider and key prefix. */
function storedPrefixes(t: TestServer): Record<string, string> {
  const db = new Database(join(t.dataDir, "orch.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT namespace, name, value FROM objects WHERE resource = 'core/secrets'").all() as {
      namespace: string;
      name: string;
      value: Buffer | string;
    }[];
    return Object.fromEntries(
      rows.map((r) => [
        `${r.namespace}/${r.name}`,
        typeof r.value === "string" ? "plain" : (/^k8s:enc:[a-z]+:v1:[^:]+:/.exec(r.value.toString("latin1"))?.[0] ?? "?"),
      ]),
    );
  } finally {
    db.close();
  }
}

const key = () => randomBytes(32).toString("base64");

function configuration(providers: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}`;
}
const aescbc = (...keys: [name: string, secret: string][]) =>
  `      - aescbc:\n          keys:\n${keys.map(([name, secret]) => `            - {name: ${name}, secret: "${secret}"}`).join("\n")}`;
const identity = "      - identity: {}";

/** Points the server at a new configuration file and restarts it, as an operator edits and restarts. */
async function restartWith(t: TestServer, text: string): Promise<void> {
  const path = join(t.dataDir, "encryption-provider-config.yaml");
  writeFileSync(path, text, { mode: 0o600 });
  t.config.encryptionProviderConfig = path;
  await t.restart();
}

const password = async (t: TestServer, ns: string, name: string) =>
  Buffer.from(await kubectl(t, `get secret ${name} -n ${ns} -o jsonpath='{.data.password}'`), "base64").toString();

const servers: TestServer[] = [];
afterAll(async () => {
  for (const t of servers) await t.stop();
});
const server = async () => {
  const t = await startTestServer();
  servers.push(t);
  return t;
};

describe("encryption at rest", () => {
  it("by default: a generated owner-only configuration, and no Secret value in the database files after create and update", async () => {
    const t = await server();
    const path = join(t.dataDir, "encryption-config.yaml");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).toMatch(/- aescbc:\n\s+keys:\n\s+- name: key1\n\s+secret: \S{44}\n\s+- identity: \{\}/);

    await kubectl(t, "create namespace enc");
    const first = marker("first");
    await kubectl(t, `create secret generic db -n enc --from-literal=password=${first}`);
    expect(await password(t, "enc", "db")).toBe(first);
    expect(leaked(t, first)).toEqual([]);

    const second = marker("second");
    await kubectl(t, `patch secret db -n enc -p '{"data":{"password":"${Buffer.from(second).toString("base64")}"}}'`);
    expect(await password(t, "enc", "db")).toBe(second);
    expect(JSON.parse(await kubectl(t, "get secrets -n enc -o json")).items[0].data.password).toBe(Buffer.from(second).toString("base64"));
    expect(leaked(t, first)).toEqual([]);
    expect(leaked(t, second)).toEqual([]);
    expect(storedPrefixes(t)["enc/db"]).toBe("k8s:enc:aescbc:v1:key1:");

    // The same configuration is used after a restart: the Secret still reads.
    await t.restart();
    expect(await password(t, "enc", "db")).toBe(second);
  });

  it("Kubernetes' rotation: add a key second, move it first, rewrite every Secret, remove the old key", async () => {
    const t = await server();
    const key1 = key();
    const key2 = key();
    // Starting from Secrets stored in plain text (identity first), as a cluster that never encrypted.
    await restartWith(t, configuration(`${identity}\n${aescbc(["key1", key1])}`));
    await kubectl(t, "create namespace rot");
    const old = marker("plain");
    await kubectl(t, `create secret generic old -n rot --from-literal=password=${old}`);
    // The check this file relies on sees a Secret that is not encrypted.
    expect(leaked(t, old).length).toBeGreaterThan(0);
    expect(storedPrefixes(t)["rot/old"]).toBe("plain");

    // Encryption switched on: new Secrets get key1, the plain one still reads through identity.
    await restartWith(t, configuration(`${aescbc(["key1", key1])}\n${identity}`));
    const one = marker("one");
    await kubectl(t, `create secret generic one -n rot --from-literal=password=${one}`);
    expect(storedPrefixes(t)["rot/one"]).toBe("k8s:enc:aescbc:v1:key1:");
    expect(await password(t, "rot", "old")).toBe(old);

    // 1. A new key in second position: every server can read it before any writes with it.
    await restartWith(t, configuration(`${aescbc(["key1", key1], ["key2", key2])}\n${identity}`));
    await kubectl(t, `create secret generic two -n rot --from-literal=password=${marker("two")}`);
    expect(storedPrefixes(t)["rot/two"]).toBe("k8s:enc:aescbc:v1:key1:");

    // 2. The new key first: it writes from now on; what key1 wrote still reads.
    await restartWith(t, configuration(`${aescbc(["key2", key2], ["key1", key1])}\n${identity}`));
    await kubectl(t, `create secret generic three -n rot --from-literal=password=${marker("three")}`);
    expect(storedPrefixes(t)["rot/three"]).toBe("k8s:enc:aescbc:v1:key2:");
    expect(storedPrefixes(t)["rot/one"]).toBe("k8s:enc:aescbc:v1:key1:");
    expect(await password(t, "rot", "one")).toBe(one);

    // 3. Every Secret rewritten, unchanged, with the documented command.
    const rewrite = await sh(t, "kubectl get secrets -A -o json | kubectl replace -f -");
    expect(rewrite.stderr).toBe("");
    expect(rewrite.code).toBe(0);
    const prefixes = storedPrefixes(t);
    expect(Object.keys(prefixes).length).toBeGreaterThanOrEqual(4);
    expect(new Set(Object.values(prefixes))).toEqual(new Set(["k8s:enc:aescbc:v1:key2:"]));

    // 4. The old key removed, and identity with it: every Secret still reads.
    await restartWith(t, configuration(aescbc(["key2", key2])));
    expect(await password(t, "rot", "old")).toBe(old);
    expect(await password(t, "rot", "one")).toBe(one);
    expect(JSON.parse(await kubectl(t, "get secrets -A -o json")).items.length).toBe(Object.keys(prefixes).length);
  });

  it("a Secret whose key was removed answers an internal error naming it; everything else keeps serving", async () => {
    const t = await server();
    await kubectl(t, "create namespace lost");
    await kubectl(t, `create secret generic gone -n lost --from-literal=password=${marker("gone")}`);
    await kubectl(t, "create serviceaccount kept -n lost");

    // The generated key1 is no longer listed: only a new key, and identity.
    await restartWith(t, configuration(`${aescbc(["key9", key()])}\n${identity}`));
    const message =
      'Internal error occurred: unable to transform key "/core/secrets/lost/gone": no matching key was found for the provided AES transformer (the value was written with the aescbc key "key1")';
    const get = await t.api.get("/api/v1/namespaces/lost/secrets/gone");
    expect(get.status).toBe(500);
    expect(get.body).toMatchObject({ kind: "Status", status: "Failure", reason: "InternalError", code: 500, message });
    const byKubectl = await sh(t, "kubectl get secret gone -n lost");
    expect(byKubectl.code).not.toBe(0);
    expect(byKubectl.stderr).toContain(`Error from server (InternalError): ${message}`);
    // A list fails as in Kubernetes; other objects, and new Secrets, are unaffected.
    expect((await t.api.get("/api/v1/namespaces/lost/secrets")).status).toBe(500);
    expect(await kubectl(t, "get serviceaccount kept -n lost -o name")).toBe("serviceaccount/kept\n");
    const fresh = marker("fresh");
    await kubectl(t, `create secret generic fresh -n default --from-literal=password=${fresh}`);
    expect(await password(t, "default", "fresh")).toBe(fresh);
    // Nor can it be deleted, as in Kubernetes: the key must come back first (docs/encryption-at-rest.md).
    expect((await sh(t, "kubectl delete secret gone -n lost")).stderr).toContain(message);
  });

  it("ORCH_ENCRYPTION_PROVIDER_CONFIG is the file, resolved; unset leaves the default to the data directory", () => {
    expect(configFromEnv({ ORCH_ENCRYPTION_PROVIDER_CONFIG: "conf/enc.yaml" }).encryptionProviderConfig).toBe(resolve("conf/enc.yaml"));
    expect(configFromEnv({}).encryptionProviderConfig).toBeUndefined();
  });

  it("refuses to start on an invalid configuration, with Kubernetes' message, before it opens the database", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "orch-encryption-invalid-"));
    try {
      const path = join(dataDir, "invalid.yaml");
      writeFileSync(path, configuration(aescbc(["short", randomBytes(8).toString("base64")])));
      // Another server's settings, on a new data directory, with the invalid file.
      const config = { ...(await server()).config, dataDir, port: 0, encryptionProviderConfig: path };
      await expect(startApiserver(config, testLog)).rejects.toThrow(
        'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]',
      );
      expect(existsSync(join(dataDir, "orch.db"))).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
