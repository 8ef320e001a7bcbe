// Assembles the apiserver: data directory, PKI, storage, kinds, HTTPS, event relay, compaction.
import { createAdaptorServer } from "@hono/node-server";
import type { NamingProfile, ObjectHeader } from "@orch/api";
import { EventRelay } from "@orch/event-relay";
import {
  KindRegistry,
  KeptObjects,
  NamespacePhases,
  type KindDefinition,
  ResourceStore,
  WatchHub,
  builtinKinds,
  ensureBuiltinObjects,
  storageClusterReader,
  VALIDATING_ADMISSION_POLICIES,
} from "@orch/registry";
import { type Logger, createLogger } from "@orch/log";
import { ApiserverMetrics, type ThreadFigures } from "@orch/metrics";
import { ensureDefaultEncryptionConfiguration, loadEncryptionConfiguration } from "@orch/encryption-at-rest";
import { KeyExistsError, type Storage } from "@orch/storage";
import { ensureKeySet } from "@orch/tokens";
import { randomUUID } from "node:crypto";
import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { join } from "node:path";
import { type ApiserverConfig, serviceAccountDefaults } from "./config.js";
import { setUpAuthentication } from "./authn/authentication.js";
import {
  ADMIN_IDENTITY,
  EVENT_RELAY_USER,
  ensureBusCredentials,
  ORCHLET_BOOTSTRAP_IDENTITY,
  ensureControllerCredentials,
  ensureOrchletBootstrapCredential,
  ensurePki,
  kubeconfig,
} from "./bootstrap/pki.js";
import { CONTROLLER_APPS, controllerUser, ensureBootstrapPolicy } from "./authz/bootstrap-policy.js";
import { natsConnectOptions } from "@orch/bus-access";
import { BusAuthorizationWriter } from "./controllers/bus-authorization.js";
import { defaultServiceAccount } from "./controllers/default-service-accounts.js";
import { InEveryNamespace } from "./controllers/in-every-namespace.js";
import { rootCaConfigMap } from "./controllers/root-ca-publisher.js";
import { ServiceAccountTokenSecrets } from "./controllers/service-account-token-secrets.js";
import { ClusterRoleAggregator } from "./controllers/cluster-role-aggregation.js";
import { RbacAuthorizer } from "./authz/rbac-authorizer.js";
import { REQUEST_TIMEOUT_MS, createApp } from "./http/app.js";
import { auditorFromConfig } from "./http/audit.js";
import { storageMetrics } from "./http/metrics.js";
import { openStorage } from "./storage-engine.js";
import { FiguresAcrossThreads, ONLY_THREAD, type ServingThread, openAuditLogAcrossThreads } from "./serving-thread.js";
import { JWKS_PATH } from "./authn/oidc.js";
import { CustomResourceServing } from "./custom-resources.js";
import { AdmissionChain } from "./admission/admission-chain.js";
import { PolicyTypeChecking } from "./controllers/policy-type-checking.js";
import { AdmissionPolicies } from "./admission/policies.js";
import { PolicyAdmission } from "./admission/policy-admission.js";
import { NodeRestriction } from "./admission/node-restriction.js";
import { WebhookAdmission } from "./admission/webhook-admission.js";
import { WebhookConfigurations } from "./admission/webhook-configurations.js";
import { GarbageCollector } from "./controllers/garbage-collector.js";
import { DEFAULT_EVENT_TTL_MS, EventTtl } from "./controllers/event-ttl.js";
import { NamespaceFinalizer } from "./controllers/namespace-finalizer.js";
import { EndpointsController } from "./controllers/endpoints.js";
import { ServiceAllocations } from "./services/service-allocations.js";
import { advertiseAddress, ensureKubernetesService } from "./services/kubernetes-service.js";

type FetchCallback = Parameters<typeof createAdaptorServer>[0]["fetch"];

/** How long a connection may take to deliver its request headers (TLS handshake included). */
const HEADER_TIMEOUT_MS = 32_000;
/** Kubernetes' IdleTimeout of a kept-alive connection (secure_serving.go). */
const IDLE_TIMEOUT_MS = 90_000;

export interface RunningApiserver {
  url: string;
  port: number;
  kubeconfigPath: string;
  registry: KindRegistry;
  /** The listening socket, which the process's other serving threads share. */
  listening: { fd: number; port: number };
  close(): Promise<void>;
}

/**
 * The namespaces every cluster has, created on first start: `default` and the system namespaces
 * (`kube-system`, `kube-public`, `kube-node-lease` under the kubernetes profile; `orch-…` under orch's).
 */
async function ensureSystemNamespaces(storage: Storage, profile: NamingProfile): Promise<void> {
  const prefix = profile.systemPrefix;
  for (const name of ["default", `${prefix}-system`, `${prefix}-public`, `${prefix}-node-lease`]) {
    const ns: ObjectHeader = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name,
        uid: randomUUID(),
        creationTimestamp: `${new Date().toISOString().slice(0, 19)}Z`,
        labels: { "kubernetes.io/metadata.name": name },
      },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
    };
    try {
      await storage.create({ resource: "core/namespaces", namespace: "", name }, ns);
    } catch (e) {
      if (!(e instanceof KeyExistsError)) throw e;
    }
  }
}

/**
 * Replaces a file at once, readers seeing the old or the new content: replicas sharing a data directory
 * write the same kubeconfigs, each through a temporary file of its own.
 */
async function writeAtomically(path: string, content: string): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}

/**
 * Node 20's HTTP server hands a TLS connection's bytes straight to its parser and, while the previous
 * response is still draining, pauses the socket and then the parser; but TLS keeps delivering records it
 * has already decrypted, the paused parser fails with HPE_PAUSED and the connection is dropped
 * mid-request (about one in ten kept-alive 20 KB POSTs). A `data` listener makes the server read through
 * the socket stream instead, whose pause does stop delivery. It is added when the server first pauses
 * the connection, before the parser is paused: until then the parser reads natively (reading every
 * connection through the stream cost ~5 % of a get's and a create's CPU).
 */
function readThroughStreamOncePaused(socket: TLSSocket): void {
  socket.pause = function pauseReadingThroughStream(this: TLSSocket) {
    Reflect.deleteProperty(this, "pause");
    // The server's own listener wrapper takes the parser off the native stream for a `data` listener.
    this.on("data", () => undefined);
    return this.pause();
  };
}

/** How long a connection closed after its answer goes on reading (and discarding) what the client still sends. */
const LINGER_MS = 500;

/**
 * A connection is closed after an answer given before the request's body was read (a 413, a 401: see
 * requestLog in http/filters.ts). Node then ends and destroys the socket at once, with the client's upload
 * still arriving; the kernel answers that data with a reset, which can reach the client before it has
 * read the answer, so it sees EPIPE or ECONNRESET instead of the Status (one oversized chunked upload in
 * ten, measured). So every connection's `destroySoon` is this: as Go's server does (closeWriteAndWait),
 * end our side first and keep reading for a moment, then tear the connection down.
 */
function endThenLinger(this: TLSSocket): void {
  this.end();
  this.resume();
  setTimeout(() => this.destroy(), LINGER_MS).unref();
}

export async function startApiserver(
  config: ApiserverConfig,
  log: Logger = createLogger("apiserver"),
  thread: ServingThread = ONLY_THREAD,
): Promise<RunningApiserver> {
  // The first serving thread leads the SQLite file's singletons and writes the process's files.
  const first = thread.index === 0;
  // The data directory holds the database, keys and credentials: the owner's alone, whoever created it.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await chmod(config.dataDir, 0o700);
  // A broken audit policy refuses start-up before anything is opened.
  const auditor = await auditorFromConfig(config.audit, log, (options) => openAuditLogAcrossThreads(thread, config.dataDir, options));
  const external = config.externalUrl ? new URL(config.externalUrl) : undefined;
  const externalHost = external?.hostname.replace(/^\[(.*)\]$/, "$1");
  const hosts = [...new Set(["localhost", "127.0.0.1", config.bind, ...(externalHost ? [externalHost] : [])])].filter(
    (h) => h !== "0.0.0.0" && h !== "::",
  );
  const pki = await ensurePki(config.dataDir, hosts);
  // Side by side: each credential waits on its key generation and its files, not on the CPU.
  const [controllerCredentials, orchletBootstrap, , serviceAccountKeys] = await Promise.all([
    ensureControllerCredentials(config.dataDir, pki, CONTROLLER_APPS, controllerUser),
    ensureOrchletBootstrapCredential(config.dataDir, pki),
    ensureBusCredentials(config.dataDir, pki, hosts),
    // Service account signing keys live beside the CA: `pki/sa-<n>.key`, the newest signing.
    ensureKeySet(join(config.dataDir, "pki")),
  ]);
  // Secrets are encrypted at rest: with the configured file, else with one written here on first start.
  const encryption = config.encryptionProviderConfig ?? (await ensureDefaultEncryptionConfiguration(config.dataDir));
  const storage = await openStorage(config, await loadEncryptionConfiguration(encryption), log, thread);
  const hub = await WatchHub.create(storage);
  const namespaces = await NamespacePhases.create(storage);

  // Listen first: the default token issuer is the server's own URL, known only once the port is
  // (ORCH_PORT=0 picks one). Until the app is in place every request is answered "not ready".
  let handle: FetchCallback | undefined;
  const server = createAdaptorServer({
    fetch: (request, env) =>
      handle ? handle(request, env) : new Response("not ready", { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } }),
    hostname: config.bind,
    createServer,
    serverOptions: {
      key: pki.serverKeyPem,
      cert: pki.serverCertPem,
      ca: pki.caPem,
      requestCert: true,
      rejectUnauthorized: false,
      // A client gets 32 s for the TLS handshake and for its request headers, as Kubernetes' ReadHeaderTimeout,
      // checked every 5 s: a connection that dribbles (slowloris) or stalls holds no socket for long.
      handshakeTimeout: config.headerTimeoutMs ?? HEADER_TIMEOUT_MS,
      headersTimeout: config.headerTimeoutMs ?? HEADER_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(5_000, config.headerTimeoutMs ?? HEADER_TIMEOUT_MS),
      // An idle kept-alive connection stays open 90 s, as Kubernetes' IdleTimeout (Node's default is 5 s):
      // a client calling every 10 s (a node's heartbeat) keeps its connection instead of a TLS handshake each time.
      keepAliveTimeout: IDLE_TIMEOUT_MS,
    },
  });
  const listen = (where: { fd: number } | { port: number; host: string }) =>
    new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
      server.listen(where);
    });
  // A thread beside the first serves on the first's socket, and only once it is ready: the port is known.
  if (!thread.listening) await listen({ port: config.port, host: config.bind });
  /** Open connections, so that stopping can wait until the requests on them have ended. */
  const connections = new Set<TLSSocket>();
  server.on("secureConnection", (socket: TLSSocket) => {
    readThroughStreamOncePaused(socket);
    socket.destroySoon = endThenLinger;
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });
  const port = thread.listening?.port ?? (server.address() as AddressInfo).port;
  const host = config.bind === "0.0.0.0" || config.bind === "::" ? "127.0.0.1" : config.bind;
  const ownUrl = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  // What clients use: this replica's own address, or the load balancer in front of every replica.
  const url = config.externalUrl ?? ownUrl;

  const kept = await KeptObjects.start(storage, [`${config.profile.group("scheduling")}/priorityclasses`]);
  const cluster = storageClusterReader(storage, kept);
  const serviceAccounts = serviceAccountDefaults(config.serviceAccounts);
  const authentication = setUpAuthentication({
    profile: config.profile,
    url,
    keys: serviceAccountKeys,
    serviceAccounts,
    tokenFile: config.tokenFile,
    requestHeader: config.requestHeader,
    cluster,
  });

  // Cluster IPs and node ports in use, from the stored Services, before any Service is written.
  const serviceAllocations = await ServiceAllocations.start(
    storage,
    config.serviceClusterIPRange,
    config.serviceNodePortRange,
    log.child("service-allocations"),
  );
  const registry = new KindRegistry();
  const kindServices = { tokens: authentication.tokenService, serviceAllocators: serviceAllocations.allocators };
  for (const kind of builtinKinds(config.profile, kindServices)) registry.add(kind);
  await ensureSystemNamespaces(storage, config.profile);
  await ensureBuiltinObjects({ storage, hub }, config.profile);
  // Custom kinds are registered before the components that index every kind's objects start.
  const otherThreads =
    thread.threads > 1 ? new FiguresAcrossThreads<ThreadFigures>(thread, config.dataDir, () => metrics.figures()) : undefined;
  const metrics: ApiserverMetrics = new ApiserverMetrics({
    storage: () => storageMetrics(storage, registry),
    ...(otherThreads ? { otherThreads: () => otherThreads.others() } : {}),
  });
  const customResources = await CustomResourceServing.start(storage, registry, config.profile, log.child("custom-resources"), {
    cluster,
    observe: (o) => metrics.conversionWebhook(o),
  });

  // Admission webhooks and policies: the configurations in force, followed from commits; called by every store.
  const webhookConfigurations = await WebhookConfigurations.start(storage, config.profile, log.child("admission"));
  const admissionPolicies = await AdmissionPolicies.start(storage, config.profile, log.child("admission"));
  // NodeRestriction first, as in Kubernetes' admission order: a node agent writes only its own objects.
  const admission = new NodeRestriction(
    config.profile,
    new AdmissionChain(
      new WebhookAdmission(webhookConfigurations, config.profile, cluster, registry, log.child("admission")),
      new PolicyAdmission(admissionPolicies, config.profile, cluster, registry, storage, log.child("admission")),
    ),
  );
  const stores = new Map<string, ResourceStore>();
  const storeFor = (kind: KindDefinition) => {
    // Not the storage resource: two kinds may share one (core and events.<domain> Events).
    const key = `${kind.group}/${kind.plural}/${kind.version}`;
    let store = stores.get(key);
    if (!store || store.kind !== kind) stores.set(key, (store = new ResourceStore(kind, { storage, hub, namespaces, cluster, admission })));
    return store;
  };
  const systemContext = () => ({
    user: { username: "system:apiserver", groups: ["system:masters"] },
    profile: config.profile,
    warnings: [],
  });

  // Authorization: the RBAC index is complete before the first request, and the bootstrap policy exists.
  const rbacGroup = config.profile.group("rbac.authorization");
  const authorizer = await RbacAuthorizer.start(storage, rbacGroup);
  await ensureBootstrapPolicy(config.profile, registry, storeFor, systemContext());
  const discovery = config.profile.group("discovery");
  const serviceStores = {
    services: storeFor(registry.lookup("", "v1", "services")!),
    pods: storeFor(registry.lookup("", "v1", "pods")!),
    endpoints: storeFor(registry.lookup("", "v1", "endpoints")!),
    endpointSlices: storeFor(registry.lookup(discovery, "v1", "endpointslices")!),
  };
  await ensureKubernetesService(
    serviceStores,
    config.profile,
    serviceAllocations.allocators.firstAddress,
    external ? Number(external.port || 443) : port,
    advertiseAddress(config.bind),
    systemContext(),
    log,
  );
  let ready = false;
  const app = createApp({
    registry,
    metrics,
    storeFor,
    profile: config.profile,
    authenticate: authentication.authenticate,
    authorizer,
    tokens: authentication.tokens,
    jwksUri: serviceAccounts.jwksUri ?? `${url}${JWKS_PATH}`,
    publicDiscovery: serviceAccounts.publicDiscovery,
    initialEventsAnnotation: config.profile.annotations.initialEventsEnd,
    ready: () => ready,
    log,
    requestTimeoutMs: config.requestTimeoutMs,
    auditor,
    flowControl: config.flowControl,
  });
  handle = app.fetch;

  // What must run once per cluster runs in the replica that holds the leadership lock (docs/high-availability.md);
  // with SQLite, the only process. The relay too: one publisher keeps the stream free of duplicates
  // without relying on JetStream's duplicate window (which remains the safety net).
  let relay: EventRelay | undefined;
  const admissionGroup = config.profile.group("admissionregistration");
  const startSingletons = (): { stop(): Promise<void> }[] => {
    const eventTtl = new EventTtl(
      storage,
      storeFor(registry.lookup("", "v1", "events")!),
      config.eventTtlMs ?? DEFAULT_EVENT_TTL_MS,
      systemContext,
      log.child("event-ttl"),
    );
    const inEveryNamespace = [
      defaultServiceAccount(storeFor(registry.lookup("", "v1", "serviceaccounts")!)),
      rootCaConfigMap(storeFor(registry.lookup("", "v1", "configmaps")!), config.profile, pki.caPem),
    ].map(
      (object) =>
        new InEveryNamespace(storage, storeFor(registry.lookup("", "v1", "namespaces")!), object, systemContext, log.child(object.name)),
    );
    const tokenSecrets = new ServiceAccountTokenSecrets(
      storage,
      {
        secrets: storeFor(registry.lookup("", "v1", "secrets")!),
        cluster,
        tokens: authentication.tokens,
        profile: config.profile,
        caPem: pki.caPem,
        ctx: systemContext,
      },
      log.child("service-account-token-secrets"),
    );
    const aggregator = new ClusterRoleAggregator(
      storage,
      authorizer,
      storeFor(registry.lookup(rbacGroup, "v1", "clusterroles")!),
      systemContext,
      log.child("cluster-role-aggregation"),
    );
    // The relay does not wait for NATS: writes succeed while it is away and the backlog follows.
    relay = config.bus
      ? EventRelay.start(storage, natsConnectOptions(config.bus, "orch-apiserver-relay"), {
          ...config.events,
          log: log.child("event-relay"),
        })
      : undefined;
    const running = relay;
    return [
      new NamespaceFinalizer(storage, registry, storeFor, systemContext, log.child("namespace-finalizer")),
      new GarbageCollector(storage, registry, storeFor, systemContext, log.child("garbage-collector")),
      eventTtl,
      ...inEveryNamespace,
      tokenSecrets,
      new EndpointsController(storage, serviceStores, config.profile, systemContext, log.child("endpoints")),
      // A record may belong to a create still in flight for as long as a request lives.
      serviceAllocations.repairing(config.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      new PolicyTypeChecking(
        storage,
        `${admissionGroup}/${VALIDATING_ADMISSION_POLICIES}`,
        storeFor(registry.lookup(admissionGroup, "v1", VALIDATING_ADMISSION_POLICIES)!),
        registry,
        systemContext,
        log.child("validatingadmissionpolicy-status"),
      ),
      aggregator,
      {
        stop: async () => {
          if (relay === running) relay = undefined;
          await running?.stop();
        },
      },
    ];
  };
  // Started and stopped one after the other: a stop that is still under way when the lock comes back
  // finishes before the next start.
  let singletons: { stop(): Promise<void> }[] = [];
  let transition = Promise.resolve();
  const switchSingletons = (start: boolean) => {
    transition = transition.then(async () => {
      await Promise.all(singletons.map((s) => s.stop()));
      singletons = start ? startSingletons() : [];
    });
    transition.catch((e) => log.error("starting or stopping the cluster's singletons failed", e));
  };
  const leadership = storage.lead("apiserver-singletons", {
    acquired: () => switchSingletons(true),
    lost: () => switchSingletons(false),
  });
  // The files the process gives its clients and its NATS server are the first thread's to write: the
  // others would write the same text again, the bus's on every RBAC change.
  // Who may read which events on the bus, from RBAC; written before the apiserver reports ready, so
  // that the NATS server started next finds it.
  const busAuthorization =
    first && config.busAuthorizationFile
      ? new BusAuthorizationWriter(
          storage,
          authorizer.storageResources(),
          authorizer,
          config.busAuthorizationFile,
          { publisher: { commonName: EVENT_RELAY_USER }, admin: ADMIN_IDENTITY },
          log.child("bus-authorization"),
        )
      : undefined;
  await busAuthorization?.write();
  // A replica that does not publish reports nothing new: the leader's /metrics carries the relay's figures.
  if (config.bus) metrics.reportRelay(async () => relay?.progress());
  const compactor = setInterval(() => {
    // Compaction keeps what the relay has not published yet; without a bus nothing waits for it. (Every
    // replica compacts: the compaction counter's row lock makes a second one at once remove nothing.)
    const published = config.bus ? Promise.resolve() : storage.currentRevision().then((r) => storage.markPublished(r));
    published
      .then(() => storage.compact({ maxRevisions: config.history.maxRevisions, maxAgeMs: config.history.maxAgeMs }))
      .catch((e) => log.error("compaction failed", e));
  }, config.history.compactEveryMs);
  compactor.unref();

  const kubeconfigPath = join(config.dataDir, "kubeconfig");
  if (first) {
    // Each controller app's own credentials, before the admin's kubeconfig says the apiserver is ready.
    const controllersDir = join(config.dataDir, "controllers");
    await mkdir(controllersDir, { recursive: true, mode: 0o700 });
    // Side by side: each is two file operations on Node's thread pool.
    await Promise.all([
      ...[...controllerCredentials].map(([app, credential]) =>
        writeAtomically(join(controllersDir, `${app}.kubeconfig`), kubeconfig(url, pki, controllerUser(app), credential)),
      ),
      // The node agents' bootstrap kubeconfig: enough to ask for their own certificates, nothing more.
      writeAtomically(
        join(controllersDir, "orchlet-bootstrap.kubeconfig"),
        kubeconfig(url, pki, ORCHLET_BOOTSTRAP_IDENTITY.commonName, orchletBootstrap),
      ),
    ]);
    // Written last, atomically: its presence means the apiserver is ready for clients.
    await writeAtomically(kubeconfigPath, kubeconfig(url, pki));
  }
  ready = true;
  if (thread.listening) await listen({ fd: thread.listening.fd });

  return {
    url: ownUrl,
    port,
    kubeconfigPath,
    registry,
    // Node keeps the socket's descriptor on the server's handle; another thread listens on it by number.
    listening: { fd: (server as unknown as { _handle: { fd: number } })._handle.fd, port },
    async close() {
      ready = false;
      otherThreads?.close();
      clearInterval(compactor);
      await leadership.release();
      await transition;
      await Promise.all([webhookConfigurations.stop(), admissionPolicies.stop(), busAuthorization?.stop()]);
      authorizer.stop();
      serviceAllocations.stop();
      customResources.stop();
      hub.close();
      namespaces.close();
      kept.close();
      const closing = [...connections].map((socket) => new Promise((resolve) => socket.once("close", resolve)));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      // The server reports itself closed before its connections' sockets are: a request still open on
      // one (a watch) ends, and is audited, only when its socket closes, a turn later.
      await Promise.all(closing);
      await storage.close();
      await auditor?.close();
    },
  };
}
