// Admission webhooks as the generic store's AdmissionHook, in k8s.io/apiserver's order
// (pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go): mutating webhooks one after
// another, each JSON patch applied before the next, those with reinvocationPolicy IfNeeded called once
// more when a later one changed the object; validating webhooks all at once, the first refusal wins.
import { randomUUID } from "node:crypto";
import type { NamingProfile, ObjectHeader, RuleWithOperations } from "@orch/api";
import type { Logger } from "@orch/log";
import { type Status, StatusError, applyJsonPatch, errors, failure, jsonEqual, labelSelectorMatches } from "@orch/machinery";
import {
  type AdmissionAttributes,
  type AdmissionHook,
  type ClusterReader,
  type KindDefinition,
  type KindRegistry,
  apiVersionOf,
  storageResource,
} from "@orch/registry";
import { type AdmissionResponse, type ServiceReference, WebhookCallError, callWebhook, reviewVersion } from "./webhook-call.js";
import type { Webhook, WebhookConfigurations } from "./webhook-configurations.js";

/** rules.Matcher: scope, operation, group, version and resource[/subresource] of one rule. */
function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes): boolean {
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

const labelsOf = (o: ObjectHeader | undefined) => o?.metadata.labels ?? {};

interface ServicePort {
  name?: string;
  port?: number;
}
interface EndpointSubset {
  addresses?: { ip?: string }[];
  ports?: { name?: string; port?: number }[];
}

/**
 * A Service reference as the address of one of its ready endpoints, as Kubernetes' apiserver does with
 * `--enable-aggregator-routing`: the Service's port by number, then the endpoint port of the same name.
 * Without endpoints there is no route: orch runs no Service proxy.
 */
async function resolveService(cluster: ClusterReader, ref: ServiceReference): Promise<{ host: string; port: number } | string> {
  const id = `${ref.namespace ?? ""}/${ref.name ?? ""}`;
  const port = ref.port ?? 443;
  const noRoute = `orch does not route Services to webhooks without endpoints: service ${id}`;
  const service = await cluster.get("", "services", ref.namespace ?? "", ref.name ?? "");
  if (!service) return `${noRoute} not found`;
  const servicePort = ((service.spec as { ports?: ServicePort[] } | undefined)?.ports ?? []).find((p) => p.port === port);
  if (!servicePort) return `${noRoute} has no port ${port}`;
  const endpoints = await cluster.get("", "endpoints", ref.namespace ?? "", ref.name ?? "");
  for (const subset of (endpoints?.subsets as EndpointSubset[] | undefined) ?? []) {
    const ip = subset.addresses?.find((a) => a.ip)?.ip;
    const target = subset.ports?.find((p) => (p.name ?? "") === (servicePort.name ?? ""));
    if (ip && target?.port) return { host: ip, port: target.port };
  }
  return `${noRoute} has no ready endpoint for port ${port}`;
}

/**
 * A webhook's view of a request: the attributes it matched (under matchPolicy Equivalent, possibly
 * another version or group of the same resource, the objects converted to it) and the request's own.
 */
interface Invocation {
  hook: Webhook;
  seen: AdmissionAttributes;
  requested: AdmissionAttributes;
}

/** An object of one kind as another kind sharing its storage serves it. */
function convert(obj: ObjectHeader, from: KindDefinition, to: KindDefinition): ObjectHeader {
  const copy = structuredClone(obj);
  const stored = from.storedAs ? from.storedAs.toStorage(copy) : copy;
  const served = to.storedAs ? to.storedAs.fromStorage(stored) : stored;
  served.apiVersion = apiVersionOf(to);
  return served;
}

export class WebhookAdmission implements AdmissionHook {
  private readonly exemptGroup: string;

  constructor(
    private readonly configurations: WebhookConfigurations,
    profile: NamingProfile,
    private readonly cluster: ClusterReader,
    private readonly registry: KindRegistry,
    private readonly log: Logger,
  ) {
    this.exemptGroup = profile.group("admissionregistration");
  }

  /** The configurations' own kinds are never intercepted: a bad webhook could otherwise lock itself in. */
  handles(kind: KindDefinition): boolean {
    return !this.configurations.empty && kind.group !== this.exemptGroup;
  }

  private isNamespaceObject(a: AdmissionAttributes): boolean {
    return a.definition.group === "" && a.definition.plural === "namespaces";
  }

  /** MatchNamespaceSelector: cluster-scoped objects other than namespaces always match. */
  private async namespaceMatches(hook: Webhook, a: AdmissionAttributes): Promise<boolean> {
    if (!hook.namespaceSelector) return true;
    if (this.isNamespaceObject(a) && a.subresource === "") {
      return labelSelectorMatches(hook.namespaceSelector, labelsOf(a.object ?? a.oldObject));
    }
    if (!a.definition.namespaced) return true;
    const namespace = await this.cluster.get("", "namespaces", "", a.namespace);
    if (!namespace) throw errors.notFound({ group: "", resource: "namespaces" }, a.namespace);
    return labelSelectorMatches(hook.namespaceSelector, labelsOf(namespace));
  }

  /**
   * The request as `kind` serves it: another version (or group) of the same stored resource. A Scale
   * stays a Scale; only the resource it is a subresource of changes.
   */
  private asKind(a: AdmissionAttributes, kind: KindDefinition): AdmissionAttributes {
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
   */
  private matchRules(hook: Webhook, a: AdmissionAttributes): AdmissionAttributes | undefined {
    const rules = hook.spec.rules ?? [];
    if (rules.some((rule) => ruleMatches(rule, a))) return a;
    if (hook.spec.matchPolicy === "Exact") return undefined;
    const resource = storageResource(a.definition);
    for (const other of this.registry.all()) {
      if (other === a.definition || storageResource(other) !== resource || other.unlisted) continue;
      if (a.subresource && a.subresource !== "scale" && !other.subresources[a.subresource]) continue;
      if (a.subresource === "scale" && !other.scale) continue;
      const seen = this.asKind(a, other);
      if (rules.some((rule) => ruleMatches(rule, seen))) return seen;
    }
    return undefined;
  }

  /** ShouldCallHook: rules, then selectors and conditions (rules first: they cost nothing). */
  private async shouldCall(hook: Webhook, a: AdmissionAttributes): Promise<Invocation | undefined> {
    const seen = this.matchRules(hook, a);
    if (!seen) return undefined;
    if (hook.objectSelector) {
      const selector = hook.objectSelector;
      const matches = [seen.object, seen.oldObject].some((o) => o !== undefined && labelSelectorMatches(selector, labelsOf(o)));
      if (!matches) return undefined;
    }
    if (!(await this.namespaceMatches(hook, seen))) return undefined;
    const invocation = { hook, seen, requested: a };
    return hook.matchConditions.length === 0 || this.conditionsMatch(invocation) ? invocation : undefined;
  }

  /**
   * matchConditions (matchconditions.Matcher): any false skips the webhook; otherwise an evaluation error
   * fails the request under failurePolicy Fail and skips the webhook under Ignore.
   */
  private conditionsMatch(invocation: Invocation): boolean {
    const { hook, seen } = invocation;
    const input = { object: seen.object ?? null, oldObject: seen.oldObject ?? null, request: this.review("v1", "", invocation).request };
    const failures: string[] = [];
    for (const condition of hook.matchConditions) {
      const result = condition.compiled.evaluate(input);
      if (result === false) return false;
      if (typeof result === "string") failures.push(`expression '${condition.expression}' resulted in error: ${result}`);
    }
    if (failures.length === 0) return true;
    if (hook.spec.failurePolicy === "Ignore") return false;
    const why = `failed evaluating match conditions, failing closed ${hook.name}: ${failures.join(", ")}`;
    throw errors.internal(new WebhookCallError(hook.name, why).message);
  }

  private async matching(hooks: readonly Webhook[], a: AdmissionAttributes): Promise<Invocation[]> {
    const selected: Invocation[] = [];
    for (const hook of hooks) {
      const invocation = await this.shouldCall(hook, a);
      if (invocation) selected.push(invocation);
    }
    return selected;
  }

  /** The AdmissionReview a webhook gets. */
  private review(version: string, uid: string, { seen: a, requested }: Invocation) {
    const resourceOf = (d: KindDefinition) => ({ group: d.group, version: d.version, resource: d.plural });
    const user = a.ctx.user;
    return {
      apiVersion: `admission.k8s.io/${version}`,
      kind: "AdmissionReview",
      request: {
        uid,
        kind: a.kind,
        resource: resourceOf(a.definition),
        ...(a.subresource ? { subResource: a.subresource } : {}),
        requestKind: requested.kind,
        requestResource: resourceOf(requested.definition),
        ...(a.subresource ? { requestSubResource: a.subresource } : {}),
        ...(a.name ? { name: a.name } : {}),
        // A Namespace's request names itself as its namespace, as Kubernetes' request info does.
        ...(a.namespace || this.isNamespaceObject(a) ? { namespace: a.namespace || a.name } : {}),
        operation: a.operation,
        userInfo: {
          username: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.groups.length ? { groups: user.groups } : {}),
          ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
        },
        object: a.object ?? null,
        oldObject: a.oldObject ?? null,
        dryRun: a.dryRun,
        options: a.options,
      },
    };
  }

  /** One call: the answer, or undefined when it failed and the webhook's failurePolicy is Ignore. */
  private async call(invocation: Invocation): Promise<AdmissionResponse | undefined> {
    const { hook, seen: a } = invocation;
    // Side effects a dry run must not cause (sideEffects Unknown/Some, only in configurations older than v1).
    if (a.dryRun && hook.spec.sideEffects !== "None" && hook.spec.sideEffects !== "NoneOnDryRun") {
      throw errors.badRequest(`admission webhook ${JSON.stringify(hook.name)} does not support dry run`);
    }
    const version = reviewVersion(hook.spec) ?? "v1";
    const uid = randomUUID();
    try {
      const review = this.review(version, uid, invocation);
      const response = await callWebhook(hook.spec, version, uid, review, hook.mutating, a.ctx.signal, (ref) =>
        resolveService(this.cluster, ref),
      );
      if (response.warnings) a.ctx.warnings.push(...response.warnings);
      return response;
    } catch (e) {
      if (!(e instanceof WebhookCallError)) throw e;
      if (hook.spec.failurePolicy === "Ignore") {
        this.log.warn(`${e.message}; failing open (failurePolicy Ignore)`);
        return undefined;
      }
      throw errors.internal(e.message);
    }
  }

  async mutate(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    let object = a.object;
    const invoked = new Set<number>();
    // Where in the list the object last changed: IfNeeded webhooks before it are called again.
    let lastChangedBy = -1;
    const runHook = async (hook: Webhook, index: number) => {
      // Each webhook is matched against the object as the ones before it left it, as Kubernetes does.
      const invocation = await this.shouldCall(hook, { ...a, object });
      if (!invocation) return;
      invoked.add(index);
      const response = await this.call(invocation);
      if (!response) return;
      const seen = invocation.seen;
      if (!response.allowed) throw denied(hook.name, response.result);
      if (response.patch === undefined) return;
      if (!seen.object || !object) {
        throw errors.internal(
          `admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`,
        );
      }
      let patched: ObjectHeader;
      try {
        const patch = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"));
        patched = applyJsonPatch(structuredClone(seen.object), patch) as ObjectHeader;
        // Back to the version the request is written in.
        if (seen.definition !== a.definition) patched = convert(patched, seen.definition, a.definition);
      } catch (e) {
        throw errors.internal(e instanceof StatusError ? (e.status.message ?? "") : (e as Error).message);
      }
      if (!jsonEqual(patched, object)) {
        object = patched;
        lastChangedBy = index;
      }
    };
    const hooks = this.configurations.mutating.webhooks;
    for (const [index, hook] of hooks.entries()) await runHook(hook, index);
    // Reinvocation: once, for IfNeeded webhooks that ran before the last change.
    const changedBy = lastChangedBy;
    for (const [index, hook] of hooks.entries()) {
      if (index >= changedBy) break;
      if (invoked.has(index) && hook.spec.reinvocationPolicy === "IfNeeded") await runHook(hook, index);
    }
    return object;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const hooks = await this.matching(this.configurations.validating.webhooks, a);
    if (hooks.length === 0) return;
    // All at once; the first refusal or failure to arrive is the answer, as Kubernetes' errCh.
    let first: unknown;
    await Promise.all(
      hooks.map(async (invocation) => {
        try {
          const response = await this.call(invocation);
          if (response && !response.allowed) throw denied(invocation.hook.name, response.result);
        } catch (e) {
          first ??= e;
        }
      }),
    );
    if (first !== undefined) throw first;
  }
}

/** webhookerrors.ToStatusErr: the webhook's Status, at least a 400, its message prefixed. */
function denied(webhook: string, result: AdmissionResponse["result"]): StatusError {
  const by = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const code = typeof result?.code === "number" && result.code >= 400 ? result.code : 400;
  const message = result?.message ? `${by}: ${result.message}` : result?.reason ? `${by}: ${result.reason}` : `${by} without explanation`;
  const base = failure(code, typeof result?.reason === "string" ? result.reason : "", message);
  const details = result?.details && typeof result.details === "object" ? { details: result.details as Status["details"] } : {};
  return new StatusError({ ...base.status, ...details });
}
