// orchlet: simulated node agents. One process registers ORCH_NODES Nodes and runs the pods bound to
// them without containers. Each node first gets its own client certificate through a
// CertificateSigningRequest made with the bootstrap credential, then talks to the API as that node only.
import { profileFromEnv } from "@orch/api";
import { ApiClient, loadKubeconfig } from "@orch/client";
import { createLogger } from "@orch/log";
import { nodeNames, orchletConfig } from "./config.js";
import { type Bootstrap, nodeClientCredential, nodeKubeconfig, nodeServingCredential } from "./identity.js";
import { Orchlet } from "./orchlet.js";
import { joinAnchors, signerAnchors } from "./trust.js";

const log = createLogger("orchlet");
const config = orchletConfig(process.env);
const profile = profileFromEnv(process.env);
const stopping = new AbortController();

const bootstrapConfig = loadKubeconfig(config.bootstrapKubeconfig);
let bootstrapClient: ApiClient | undefined;
const bootstrap: Bootstrap = {
  config: bootstrapConfig,
  client: () => (bootstrapClient ??= new ApiClient(bootstrapConfig, { userAgent: "orchlet-bootstrap" })),
};

/** At most `limit` at once: a hundred nodes need not open a hundred requests together. */
async function eachLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

let orchlet: Orchlet | undefined;
const stop = (code: number) => {
  if (stopping.signal.aborted) return;
  stopping.abort();
  void (async () => {
    const timeout = new Promise((r) => setTimeout(r, 4_000).unref());
    await Promise.race([orchlet?.stop(), timeout]);
    bootstrapClient?.close();
    for (const agent of orchlet?.agents.values() ?? []) agent.client.close();
    process.exit(code);
  })();
};
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
// Under the launcher stdin is a pipe from it: when it closes, the launcher is gone, and so are we.
if (process.env.ORCH_SUPERVISED === "1")
  process.stdin
    .on("end", () => stop(0))
    .on("error", () => stop(0))
    .resume();

/** Registers the nodes and runs their pods; resolves once they are ready. */
async function start(): Promise<void> {
  const names = nodeNames(config);
  log.info(`starting ${names.length} node(s) (api ${bootstrapConfig.server}, pods Ready after ${config.readyDelayMs} ms)`);
  const identity = { profile, certDir: config.certDir, log, signal: stopping.signal };
  const credentials = await eachLimited(names, 8, (name) => nodeClientCredential(name, bootstrap, identity));
  // The apiserver is verified with the bootstrap CA and the cluster's published trust bundle.
  let trusted = bootstrapConfig;
  if (credentials.length > 0) {
    const first = new ApiClient(nodeKubeconfig(bootstrapConfig, credentials[0]!), { userAgent: "orchlet" });
    try {
      const anchors = await signerAnchors(first, profile);
      if (anchors) trusted = { ...bootstrapConfig, ca: joinAnchors(bootstrapConfig.ca, anchors) };
      log.info(
        anchors
          ? "verifying the apiserver with the bootstrap CA and the published trust bundle"
          : "no trust bundle published yet: verifying the apiserver with the bootstrap CA",
      );
    } catch (e) {
      log.warn(`trust bundles unreadable, verifying the apiserver with the bootstrap CA: ${(e as Error).message}`);
    } finally {
      first.close();
    }
  }
  const nodes = names.map((name, index) => ({
    name,
    index,
    client: new ApiClient(nodeKubeconfig(trusted, credentials[index]!), { userAgent: `orchlet/${name}` }),
  }));
  // From here on the nodes talk as themselves; the bootstrap credential is no longer used.
  bootstrapClient?.close();
  bootstrapClient = undefined;
  orchlet = new Orchlet({ config, profile, log, nodes });
  await orchlet.start();
  log.info("ready");
  if (config.serving) {
    // Serving certificates wait for an administrator's approval; ask, then look again now and then.
    const waiting = new Set(orchlet.agents.keys());
    const ask = async () => {
      for (const name of [...waiting]) {
        const agent = orchlet!.agents.get(name)!;
        try {
          if (await nodeServingCredential(name, agent.address, agent.client, identity)) {
            waiting.delete(name);
            log.info(`${name}: serving certificate issued`);
          }
        } catch (e) {
          log.warn(`${name}: serving certificate: ${(e as Error).message}`);
          waiting.delete(name);
        }
      }
      if (waiting.size > 0 && !stopping.signal.aborted) setTimeout(() => void ask(), config.servingRecheckMs).unref();
    };
    void ask();
  }
}

/** main.ts saves the code cache once this resolves; after a failed start the process exits instead. */
export const working = start().catch((e: unknown) => {
  if (!stopping.signal.aborted) {
    log.error("start failed", e);
    stop(1);
  }
  return new Promise<void>(() => undefined);
});
