// @orch/client: the typed HTTPS client and the informers every controller is built on.
//
// Public API (small and stable on purpose; libs/controller builds on exactly this):
//
//   loadKubeconfig(path?): Kubeconfig          path, else the first existing file of $KUBECONFIG, else ~/.kube/config
//   parseKubeconfig(text, baseDir?): Kubeconfig
//   Kubeconfig { server; ca?; cert?; key?; token?; insecureSkipTlsVerify?; tlsServerName?; namespace? }
//
//   ResourceRef { group ("" = core); version; plural; namespaced }
//   KubeObject  { apiVersion?; kind?; metadata?: ObjectMeta }     kinds from @orch/api fit as T
//   ObjectList<T> { metadata: { resourceVersion?, continue? }; items: T[] }
//   keyOf(obj) → "ns/name" | "name";  splitKey(key) → { namespace, name };  revisionOf(obj) → number
//
//   class ApiClient                                   HTTPS keep-alive, the caller's own credentials
//     new ApiClient(kubeconfig, { userAgent?, requestTimeoutMs?, maxConnections? (requests' connections, default 32;
//                   each watch has its own) });  ApiClient.fromKubeconfig(path?, options?)
//     get<T>(ref, name, { namespace? })
//     list<T>(ref, { namespace?, labelSelector?, fieldSelector?, limit?, continue?, resourceVersion?, resourceVersionMatch? })
//     listAll<T>(ref, same)                          every page (limit = page size), one revision
//     create<T>(ref, obj, { namespace?, dryRun?, fieldValidation? })   namespace from options or obj.metadata
//     update<T>(ref, obj, options?)                  PUT; Conflict when metadata.resourceVersion is stale
//     updateStatus<T>(ref, obj, options?);  updateSubresource<T>(ref, obj, "status" | "approval" | …, options?)
//     patch<T>(ref, name, patch, { namespace?, type?: "merge" | "json", subresource?, dryRun? })
//     delete<T>(ref, name, { namespace?, gracePeriodSeconds?, propagationPolicy?, preconditions?, dryRun? }) → T | Status
//     watch<T>(ref, { namespace?, labelSelector?, fieldSelector?, resourceVersion?, resourceVersionMatch?,
//                     allowWatchBookmarks? (default true), timeoutSeconds?, sendInitialEvents? }): WatchStream<T>
//       WatchStream<T> = AsyncIterable<{ type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }> & { close() }
//       an ERROR event throws: ExpiredError for 410 (relist), ApiError otherwise; close() ends it quietly
//     updateWithRetry<T>(ref, name, mutate: (fresh: T) => T | void | Promise<…>, { namespace?, subresource?, attempts? })
//       read, mutate, PUT; on Conflict read again and re-apply; writes nothing when mutate changed nothing
//     path(ref, namespace?, name?, subresource?): string;  close()
//
//   class ApiError extends Error { status: Status; code; reason; causes }    every non-2xx answer
//   class ExpiredError extends ApiError                                        410 Expired / Gone
//   isNotFound(e), isConflict(e), isAlreadyExists(e), isExpired(e), isInvalid(e), isForbidden(e)
//
//   class Informer<T extends KubeObject>
//     new Informer<T>(client, { ref, namespace?, labelSelector?, fieldSelector?, resyncPeriodMs?, pageSize?, onError?,
//                              nats?: { servers? | connection?, stream?, batch?, fetchExpiresMs? } })
//       with `nats`: list over HTTPS + JetStream events (see informer/nats-source.ts for the no-gap design);
//       without: list + HTTP watch. Same interface and guarantees.
//     addEventHandler({ onAdd?(obj), onUpdate?(old, obj), onDelete?(obj) }) → remove()
//       called one at a time in revision order; a returned promise is awaited (keep handlers quick: enqueue keys)
//     addIndex(name, (obj) => string[]);  byIndex(name, value): T[]      namespaceIndex is the usual one
//     start();  stop(): Promise<void>;  hasSynced();  waitForSync(timeoutMs?)
//     get(name, namespace?);  getByKey(key);  list();  keys();  revision;  stats { lists, listRevision, events, resyncs }
//
// Objects handed out by the client and the informer cache are shared: never mutate a cached object;
// copy it (structuredClone) first, or use updateWithRetry, which hands `mutate` a fresh copy.
export {
  type KubeObject,
  type ListMeta,
  type ObjectList,
  type ObjectMeta,
  type ResourceRef,
  keyOf,
  revisionOf,
  splitKey,
} from "./types.js";
export {
  ApiError,
  ExpiredError,
  type Status,
  type StatusCause,
  isAlreadyExists,
  isConflict,
  isExpired,
  isForbidden,
  isInvalid,
  isNotFound,
} from "./errors.js";
export { type Kubeconfig, loadKubeconfig, parseKubeconfig } from "./kubeconfig.js";
export { nodesResource, podsResource } from "./resources.js";
export {
  ApiClient,
  type ClientOptions,
  type DeleteOptions,
  type ListOptions,
  type NamespaceOption,
  type PatchOptions,
  type RetryOptions,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
  type WatchStream,
  type WriteOptions,
} from "./client.js";
export { type EventHandlers, Informer, type InformerStats } from "./informer/informer.js";
export type { InformerOptions, NatsOptions } from "./informer/source.js";
export { type IndexFunc, namespaceIndex } from "./informer/cache.js";
