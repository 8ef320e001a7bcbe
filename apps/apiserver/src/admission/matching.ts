// Which writes an admission webhook or policy hears of, shared by both as Kubernetes shares
// k8s.io/apiserver/pkg/admission/plugin/webhook/predicates (rules, namespace, object) between the
// webhook dispatchers and admission policies' matching.Matcher: rules by operation, group, version,
// resource[/subresource] and scope; matchPolicy Equivalent (another version or group of the same
// stored resource); label selectors on the object and on its namespace.
import type { ObjectHeader, RuleWithOperations } from "@orch/api";
import { type LabelSelector, cloneJson, errors, labelSelectorMatches } from "@orch/machinery";
import {
  type AdmissionAttributes,
  type ClusterReader,
  type KindDefinition,
  type KindRegistry,
  apiVersionOf,
  storageResource,
} from "@orch/registry";

/** rules.Matcher: scope, operation, group, version and resource[/subresource] of one rule. */
export function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes): boolean {
  const scope = rule.scope ?? "*";
  const namespaced = a.definition.namespaced;
  if (scope === "Cluster" && namespaced) return false;
  if (scope === "Namespaced" && !namespaced) return false;
  const anyOf = (list: readonly string[] | undefined, value: string) => (list ?? []).some((x) => x === "*" || x === value);
  if (!anyOf(rule.operations, a.operation)) return false;
  if (!anyOf(rule.apiGroups, a.definition.group)) return false;
  if (!anyOf(rule.apiVersions, a.definition.version)) return false;
  return (rule.resources ?? []).some((entry) => {
    const slash = entry.indexOf("/");
    const resource = slash < 0 ? entry : entry.slice(0, slash);
    const subresource = slash < 0 ? "" : entry.slice(slash + 1);
    return (resource === "*" || resource === a.definition.plural) && (subresource === "*" || subresource === a.subresource);
  });
}

export const labelsOf = (o: ObjectHeader | undefined) => o?.metadata.labels ?? {};

export const isNamespaceObject = (a: AdmissionAttributes) => a.definition.group === "" && a.definition.plural === "namespaces";

/** An object of one kind as another kind sharing its storage serves it. */
export function convert(obj: ObjectHeader, from: KindDefinition, to: KindDefinition): ObjectHeader {
  const copy = cloneJson(obj);
  const stored = from.storedAs ? from.storedAs.toStorage(copy) : copy;
  const served = to.storedAs ? to.storedAs.fromStorage(stored) : stored;
  served.apiVersion = apiVersionOf(to);
  return served;
}

/**
 * The AdmissionRequest of a request as a matched rule sees it (`seen`: possibly another version of the
 * resource) and as it was made (`requested`), without its objects: what a webhook's review carries
 * around them and what admission CEL sees as `request` (cel.CreateAdmissionRequest).
 */
export function admissionRequest(seen: AdmissionAttributes, requested: AdmissionAttributes, uid: string) {
  const resourceOf = (d: KindDefinition) => ({ group: d.group, version: d.version, resource: d.plural });
  const user = seen.ctx.user;
  return {
    uid,
    kind: seen.kind,
    resource: resourceOf(seen.definition),
    ...(seen.subresource ? { subResource: seen.subresource } : {}),
    requestKind: requested.kind,
    requestResource: resourceOf(requested.definition),
    ...(seen.subresource ? { requestSubResource: seen.subresource } : {}),
    ...(seen.name ? { name: seen.name } : {}),
    // A Namespace's request names itself as its namespace, as Kubernetes' request info does.
    ...(seen.namespace || isNamespaceObject(seen) ? { namespace: seen.namespace || seen.name } : {}),
    operation: seen.operation,
    userInfo: {
      username: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups.length ? { groups: user.groups } : {}),
      ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
    },
    dryRun: seen.dryRun,
    options: seen.options,
  };
}

/** Each request (its context) reads its namespace once, however many webhooks and policies ask, as an informer cache would serve them. */
const namespaceReads = new WeakMap<object, Promise<ObjectHeader | undefined>>();

export class RequestMatcher {
  constructor(
    private readonly cluster: ClusterReader,
    private readonly registry: KindRegistry,
  ) {}

  /** The namespace a request is in, as Kubernetes' matcher fetches it; undefined for cluster-scoped writes. */
  async namespaceOf(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    if (!a.definition.namespaced || a.namespace === "") return undefined;
    let read = namespaceReads.get(a.ctx);
    if (!read) namespaceReads.set(a.ctx, (read = this.cluster.get("", "namespaces", "", a.namespace)));
    const namespace = await read;
    if (!namespace) throw errors.notFound({ group: "", resource: "namespaces" }, a.namespace);
    return namespace;
  }

  /** MatchNamespaceSelector: cluster-scoped objects other than namespaces always match; a Namespace matches by its own labels. */
  async namespaceMatches(selector: LabelSelector | undefined, a: AdmissionAttributes): Promise<boolean> {
    if (!selector) return true;
    if (isNamespaceObject(a) && a.subresource === "") return labelSelectorMatches(selector, labelsOf(a.object ?? a.oldObject));
    const namespace = await this.namespaceOf(a);
    return namespace === undefined || labelSelectorMatches(selector, labelsOf(namespace));
  }

  /** MatchObjectSelector: the object's or the old object's labels. */
  objectMatches(selector: LabelSelector | undefined, a: AdmissionAttributes): boolean {
    if (!selector) return true;
    return [a.object, a.oldObject].some((o) => o !== undefined && labelSelectorMatches(selector, labelsOf(o)));
  }

  /**
   * The request as `kind` serves it: another version (or group) of the same stored resource. A Scale
   * stays a Scale; only the resource it is a subresource of changes.
   */
  asKind(a: AdmissionAttributes, kind: KindDefinition): AdmissionAttributes {
    const scale = a.subresource === "scale";
    const view = (o: ObjectHeader | undefined) => (o && !scale ? convert(o, a.definition, kind) : o);
    return {
      ...a,
      definition: kind,
      kind: scale ? a.kind : { group: kind.group, version: kind.version, kind: kind.kind },
      object: view(a.object),
      oldObject: view(a.oldObject),
    };
  }

  /**
   * The rules: the request itself, or under matchPolicy Equivalent the first other version or group of
   * the same resource (the same storage) that a rule names, as Kubernetes' equivalent-resource mapper.
   * Returns the request as the matching rule sees it.
   */
  matchRules<R extends RuleWithOperations>(
    rules: readonly R[],
    matchPolicy: string | undefined,
    a: AdmissionAttributes,
    matches: (rule: R, a: AdmissionAttributes) => boolean = ruleMatches,
  ): AdmissionAttributes | undefined {
    if (rules.some((rule) => matches(rule, a))) return a;
    if (matchPolicy === "Exact") return undefined;
    const resource = storageResource(a.definition);
    for (const other of this.registry.all()) {
      if (other === a.definition || storageResource(other) !== resource || other.unlisted) continue;
      if (a.subresource && a.subresource !== "scale" && !other.subresources[a.subresource]) continue;
      if (a.subresource === "scale" && !other.scale) continue;
      const seen = this.asKind(a, other);
      if (rules.some((rule) => matches(rule, seen))) return seen;
    }
    return undefined;
  }
}
