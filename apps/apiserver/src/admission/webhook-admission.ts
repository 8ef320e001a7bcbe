// Admission webhooks as the generic store's AdmissionHook, in k8s.io/apiserver's order
// (pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go): mutating webhooks one after
// another, each JSON patch applied before the next, those with reinvocationPolicy IfNeeded called once
// more when a later one changed the object; validating webhooks all at once, the first refusal wins.
import { randomUUID } from "node:crypto";
import type { NamingProfile, ObjectHeader } from "@orch/api";
import type { Logger } from "@orch/log";
import { type Status, StatusError, applyJsonPatch, cloneJson, errors, failure, jsonEqual } from "@orch/machinery";
import {
  type AdmissionAttributes,
  type AdmissionHook,
  type ClusterReader,
  type KindDefinition,
  type KindRegistry,
  authorizerFor,
} from "@orch/registry";
import { authorizationsOf, evaluateAuthorized } from "./authorizations.js";
import { RequestMatcher, admissionRequest, convert } from "./matching.js";
import { type AdmissionResponse, type ServiceReference, WebhookCallError, callWebhook, reviewVersion } from "./webhook-call.js";
import type { Webhook, WebhookConfigurations } from "./webhook-configurations.js";

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
export async function resolveService(cluster: ClusterReader, ref: ServiceReference): Promise<{ host: string; port: number } | string> {
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

/** Kubernetes' audit annotation prefixes of the two dispatchers. */
const MUTATION_ANNOTATION_PREFIX = "mutation.webhook.admission.k8s.io/";
const VALIDATING_ANNOTATION_PREFIX = "validating.webhook.admission.k8s.io/";

export class WebhookAdmission implements AdmissionHook {
  private readonly exemptGroup: string;
  private readonly matcher: RequestMatcher;

  constructor(
    private readonly configurations: WebhookConfigurations,
    profile: NamingProfile,
    private readonly cluster: ClusterReader,
    registry: KindRegistry,
    private readonly log: Logger,
  ) {
    this.exemptGroup = profile.group("admissionregistration");
    this.matcher = new RequestMatcher(cluster, registry);
  }

  /** The configurations' own kinds are never intercepted: a bad webhook could otherwise lock itself in. */
  handles(kind: KindDefinition): boolean {
    return !this.configurations.empty && kind.group !== this.exemptGroup;
  }

  /** ShouldCallHook: rules, then selectors and conditions (rules first: they cost nothing). */
  private async shouldCall(hook: Webhook, a: AdmissionAttributes): Promise<Invocation | undefined> {
    const seen = this.matcher.matchRules(hook.spec.rules ?? [], hook.spec.matchPolicy, a);
    if (!seen) return undefined;
    if (!this.matcher.objectMatches(hook.objectSelector, seen)) return undefined;
    if (!(await this.matcher.namespaceMatches(hook.namespaceSelector, seen))) return undefined;
    const invocation = { hook, seen, requested: a };
    if (hook.matchConditions.length === 0) return invocation;
    const matched = await evaluateAuthorized(a.ctx, () => this.conditionsMatch(invocation));
    if (matched instanceof StatusError) {
      this.log.warn(`Failed evaluating match conditions, failing closed ${hook.name}: ${matched.status.message}`);
      throw matched;
    }
    return matched ? invocation : undefined;
  }

  /**
   * matchConditions (matchconditions.Matcher): any false skips the webhook; otherwise evaluation errors
   * refuse the request under failurePolicy Fail (403, `<resource> "<name>" is forbidden: <errors>`, as
   * ShouldCallHook wraps them in NewForbidden) and skip the webhook under Ignore.
   */
  private conditionsMatch(invocation: Invocation): boolean | StatusError {
    const { hook, seen, requested } = invocation;
    const input = {
      object: seen.object ?? null,
      oldObject: seen.oldObject ?? null,
      request: this.review("v1", "", invocation).request,
      authorizer: authorizerFor(authorizationsOf(requested.ctx), {
        group: requested.definition.group,
        resource: requested.definition.plural,
        subresource: requested.subresource,
        namespace: requested.namespace,
        name: requested.name,
      }),
    };
    const failures: string[] = [];
    for (const condition of hook.matchConditions) {
      const result = condition.compiled.evaluate(input);
      if (result === false) return false;
      if (typeof result === "string") failures.push(result);
    }
    if (failures.length === 0) return true;
    if (hook.spec.failurePolicy === "Ignore") return false;
    // utilerrors.NewAggregate: one error as itself, several in brackets.
    const why = failures.length === 1 ? failures[0]! : `[${failures.join(", ")}]`;
    return errors.forbidden({ group: requested.definition.group, resource: requested.definition.plural }, requested.name, why);
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
  private review(version: string, uid: string, { seen, requested }: Invocation) {
    return {
      apiVersion: `admission.k8s.io/${version}`,
      kind: "AdmissionReview",
      request: { ...admissionRequest(seen, requested, uid), object: seen.object ?? null, oldObject: seen.oldObject ?? null },
    };
  }

  /**
   * One call: the answer, or undefined when it failed and the webhook's failurePolicy is Ignore (then
   * the audit event records `failedOpenKey`, as Kubernetes' failed-open annotations).
   */
  private async call(invocation: Invocation, failedOpenKey: string): Promise<AdmissionResponse | undefined> {
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
      for (const [key, value] of Object.entries(response.auditAnnotations ?? {})) a.ctx.annotate?.(`${hook.name}/${key}`, value);
      if (response.warnings) a.ctx.warnings.push(...response.warnings);
      return response;
    } catch (e) {
      if (!(e instanceof WebhookCallError)) throw e;
      if (hook.spec.failurePolicy === "Ignore") {
        this.log.warn(`Failed calling webhook, failing open ${hook.name}: ${e.message}`);
        a.ctx.annotate?.(failedOpenKey, hook.name);
        return undefined;
      }
      this.log.warn(`Failed calling webhook, failing closed ${hook.name}: ${e.message}`);
      throw errors.internal(e.message);
    }
  }

  async mutate(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    let object = a.object;
    const invoked = new Set<number>();
    // Where in the list the object last changed: IfNeeded webhooks before it are called again.
    let lastChangedBy = -1;
    const runHook = async (hook: Webhook, index: number, round: number) => {
      // Each webhook is matched against the object as the ones before it left it, as Kubernetes does.
      const invocation = await this.shouldCall(hook, { ...a, object });
      if (!invocation) return;
      invoked.add(index);
      const at = `round_${round}_index_${index}`;
      let mutated = false;
      try {
        const response = await this.call(invocation, `failed-open.${MUTATION_ANNOTATION_PREFIX}${at}`);
        if (!response) return;
        if (!response.allowed) throw denied(hook.name, response.result);
        const changed = response.patch !== undefined && this.applyPatch(hook, response.patch, invocation.seen, a, object);
        if (changed) {
          object = changed;
          lastChangedBy = index;
          mutated = true;
        }
      } finally {
        // mutationAnnotationValue, for every call however it ended (Kubernetes defers it).
        a.ctx.annotate?.(
          `${MUTATION_ANNOTATION_PREFIX}${at}`,
          JSON.stringify({ configuration: hook.configuration, webhook: hook.name, mutated }),
        );
      }
    };
    const hooks = this.configurations.mutating.webhooks;
    for (const [index, hook] of hooks.entries()) await runHook(hook, index, 0);
    // Reinvocation: once, for IfNeeded webhooks that ran before the last change.
    const changedBy = lastChangedBy;
    for (const [index, hook] of hooks.entries()) {
      if (index >= changedBy) break;
      if (invoked.has(index) && hook.spec.reinvocationPolicy === "IfNeeded") await runHook(hook, index, 1);
    }
    return object;
  }

  /**
   * A webhook's JSON patch applied to the object it saw, back in the request's version: the changed
   * object, or false when the patch changed nothing. A patch that does not decode or apply is the
   * server's error (500), as Kubernetes' dispatcher treats it, whatever the failurePolicy.
   */
  private applyPatch(
    hook: Webhook,
    encoded: string,
    seen: AdmissionAttributes,
    a: AdmissionAttributes,
    current: ObjectHeader | undefined,
  ): ObjectHeader | false {
    let patch: unknown;
    try {
      patch = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
    } catch (e) {
      throw errors.internal((e as Error).message);
    }
    if (Array.isArray(patch) && patch.length === 0) return false;
    if (!seen.object || !current) {
      throw errors.internal(
        `admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`,
      );
    }
    let patched: ObjectHeader;
    try {
      patched = applyJsonPatch(cloneJson(seen.object), patch) as ObjectHeader;
      // Back to the version the request is written in.
      if (seen.definition !== a.definition) patched = convert(patched, seen.definition, a.definition);
    } catch (e) {
      throw errors.internal(e instanceof StatusError ? (e.status.message ?? "") : (e as Error).message);
    }
    return jsonEqual(patched, current) ? false : patched;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const hooks = await this.matching(this.configurations.validating.webhooks, a);
    if (hooks.length === 0) return;
    // All at once; the first refusal or failure to arrive is the answer, as Kubernetes' errCh.
    let first: unknown;
    await Promise.all(
      hooks.map(async (invocation, index) => {
        try {
          const response = await this.call(invocation, `failed-open.${VALIDATING_ANNOTATION_PREFIX}round_0_index_${index}`);
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
