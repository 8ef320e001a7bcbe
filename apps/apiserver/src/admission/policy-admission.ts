// ValidatingAdmissionPolicies enforced in-process, as k8s.io/apiserver's
// pkg/admission/plugin/policy/validating (dispatcher.go, validator.go) and generic.CollectParams do it:
// a policy's matchConstraints, then each binding's matchResources, the binding's params, the policy's
// matchConditions, variables and validations in CEL; a failed validation acts as the binding's
// validationActions say: Deny refuses the request (after every policy ran, the first denial, `<resource>
// "<name>" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`, with
// the validation's reason, Invalid (422) by default), Warn adds a Warning header, Audit an audit annotation.
import type { NamedRuleWithOperations, NamingProfile, ObjectHeader } from "@orch/api";
import { ADMISSION_RUNTIME_COST_BUDGET, AdmissionActivation, type AdmissionExpression, OUT_OF_BUDGET } from "@orch/registry";
import type { Logger } from "@orch/log";
import { type StatusError, failure, labelSelectorMatches } from "@orch/machinery";
import {
  type AdmissionAttributes,
  type AdmissionHook,
  type ClusterReader,
  type KindDefinition,
  type KindRegistry,
  apiVersionOf,
  authorizerFor,
  storageResource,
} from "@orch/registry";
import type { Storage } from "@orch/storage";
import type { AdmissionPolicies, CompiledBinding, CompiledMatch, CompiledPolicy } from "./policies.js";
import { authorizationsOf, evaluateAuthorized } from "./authorizations.js";
import { RequestMatcher, admissionRequest, isNamespaceObject, ruleMatches } from "./matching.js";

/** celconfig.RuntimeCELCostBudgetMatchConditions. */
const MATCH_CONDITIONS_BUDGET = 2_500_000;
/** celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;
const MAX_AUDIT_ANNOTATION_VALUE_LENGTH = 10 * 1024;
const VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure";

/** Kubernetes' PolicyDecision: admit or deny, why, and whether evaluation failed. */
interface Decision {
  deny: boolean;
  error: boolean;
  message: string;
  reason?: string;
}

interface Denial {
  policy: string;
  binding: string | undefined;
  message: string;
  reason: string | undefined;
}

/** An evaluation's results: decisions per validation and audit annotations (or an error that denies). */
interface ValidateResult {
  decisions: Decision[];
  annotations: ({ key: string; value: string } | { error: string })[];
}

/** reasonToCode. */
function reasonToCode(reason: string): number {
  switch (reason) {
    case "Forbidden":
      return 403;
    case "Unauthorized":
      return 401;
    case "RequestEntityTooLarge":
      return 413;
    default:
      return 422;
  }
}

/** A NamedRuleWithOperations: the rule, and the request's name among resourceNames when it lists any. */
const namedRuleMatches = (rule: NamedRuleWithOperations, a: AdmissionAttributes) =>
  ruleMatches(rule, a) && ((rule.resourceNames ?? []).length === 0 || rule.resourceNames!.includes(a.name));

/** The fields of a namespace admission CEL sees as `namespaceObject` (cel.CreateNamespaceObject). */
function namespaceObject(namespace: ObjectHeader | undefined): unknown {
  if (!namespace) return null;
  const m = namespace.metadata;
  const metadata: Record<string, unknown> = {};
  for (const key of [
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
  ] as const) {
    if (m[key] !== undefined) metadata[key] = m[key];
  }
  return { metadata, spec: namespace.spec ?? {}, status: namespace.status ?? {} };
}

export class PolicyAdmission implements AdmissionHook {
  private readonly exemptGroup: string;
  private readonly matcher: RequestMatcher;

  constructor(
    private readonly policies: AdmissionPolicies,
    profile: NamingProfile,
    cluster: ClusterReader,
    private readonly registry: KindRegistry,
    private readonly storage: Storage,
    private readonly log: Logger,
  ) {
    this.exemptGroup = profile.group("admissionregistration");
    this.matcher = new RequestMatcher(cluster, registry);
  }

  /** Policies and their bindings are never subject to policies (Kubernetes exempts the whole group's policy kinds). */
  handles(kind: KindDefinition): boolean {
    return !this.policies.empty && kind.group !== this.exemptGroup;
  }

  /** Policies only validate. */
  async mutate(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    return a.object;
  }

  /**
   * matching.Matcher.Matches: namespace and object selectors, excludeResourceRules, resourceRules (none:
   * everything). The request as the matching rule sees it, or undefined.
   */
  private async matches(match: CompiledMatch, a: AdmissionAttributes): Promise<AdmissionAttributes | undefined> {
    // Rules first: they cost nothing, where the namespace selector may read the namespace. All must match
    // either way; only which error a request that fails several would see could differ.
    const policy = match.spec.matchPolicy;
    if (this.matcher.matchRules(match.spec.excludeResourceRules ?? [], policy, a, namedRuleMatches)) return undefined;
    const rules = match.spec.resourceRules ?? [];
    const seen = rules.length === 0 ? a : this.matcher.matchRules(rules, policy, a, namedRuleMatches);
    if (!seen) return undefined;
    if (!this.matcher.objectMatches(match.objectSelector, a)) return undefined;
    if (!(await this.matcher.namespaceMatches(match.namespaceSelector, a))) return undefined;
    return seen;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const denials: Denial[] = [];
    const configError = (policy: CompiledPolicy, binding: CompiledBinding | undefined, error: string) => {
      if (policy.failurePolicy === "Ignore") return;
      if (policy.failurePolicy !== "Fail") {
        denials.push({
          policy: policy.name,
          binding: binding?.name,
          message: `unrecognized failure policy: '${policy.failurePolicy}'`,
          reason: undefined,
        });
        return;
      }
      const message = binding ? `failed to configure binding: ${error}` : `failed to configure policy: ${error}`;
      denials.push({ policy: policy.name, binding: binding?.name, message, reason: undefined });
    };
    for (const { policy, bindings } of this.policies.hooks) {
      if (!policy.match) {
        configError(policy, undefined, "policy contained no match constraints, a required field");
        continue;
      }
      const seen = await this.matches(policy.match, a);
      if (!seen) continue;
      const paramKind = policy.paramKind ? this.paramKindDefinition(policy) : undefined;
      if (policy.paramKind && !paramKind) {
        const { group, version, kind } = policy.paramKind;
        configError(policy, undefined, `failed to find resource referenced by paramKind: '${group}/${version}, Kind=${kind}'`);
        continue;
      }
      // Per policy, the same key from several bindings is kept once per value and joined.
      const annotations = new Map<string, string[]>();
      for (const binding of bindings) {
        if (binding.match && !(await this.matches(binding.match, a))) continue;
        let params: unknown[];
        try {
          params = await this.collectParams(paramKind, binding, a);
        } catch (e) {
          configError(policy, binding, (e as Error).message);
          continue;
        }
        if (params.length === 0) continue;
        // The Namespace kind names itself as its namespace; its namespaceObject is null.
        const namespace = isNamespaceObject(a) ? undefined : await this.matcher.namespaceOf(a);
        for (const param of params) {
          const result = await evaluateAuthorized(a.ctx, () => this.evaluate(policy, seen, a, param, namespace));
          result.decisions.forEach((decision, index) => {
            if (!decision.deny) return;
            for (const action of binding.spec.validationActions ?? []) {
              if (action === "Deny")
                denials.push({ policy: policy.name, binding: binding.name, message: decision.message, reason: decision.reason });
              else if (action === "Warn") {
                a.ctx.warnings.push(
                  `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${decision.message}`,
                );
              } else if (action === "Audit") {
                const value = [
                  {
                    message: decision.message,
                    policy: policy.name,
                    binding: binding.name,
                    expressionIndex: index,
                    validationActions: binding.spec.validationActions,
                  },
                ];
                a.ctx.annotate?.(VALIDATION_FAILURE_ANNOTATION, JSON.stringify(value));
              }
            }
          });
          for (const annotation of result.annotations) {
            if ("error" in annotation) {
              // An audit annotation that fails under failurePolicy Fail denies, whatever the binding's actions.
              denials.push({ policy: policy.name, binding: binding.name, message: annotation.error, reason: undefined });
              continue;
            }
            const values = annotations.get(annotation.key) ?? [];
            if (!values.includes(annotation.value)) values.push(annotation.value);
            annotations.set(annotation.key, values);
          }
        }
      }
      for (const [key, values] of annotations) a.ctx.annotate?.(`${policy.name}/${key}`, values.join(", "));
    }
    const denied = denials[0];
    if (denied) throw this.denial(a, denied);
  }

  /** The refusal: admission.NewForbidden's text, then the decision's reason and its code. */
  private denial(a: AdmissionAttributes, d: Denial): StatusError {
    const message = d.binding
      ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
      : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
    const resource = a.definition.group ? `${a.definition.plural}.${a.definition.group}` : a.definition.plural;
    const name = a.name || (a.object?.metadata.name ?? "");
    const reason = d.reason || "Invalid";
    const text = `${resource}${name ? ` "${name}"` : ""} is forbidden: ${message}`;
    return failure(reasonToCode(reason), reason, text, {
      ...(name ? { name } : {}),
      group: a.definition.group,
      kind: a.definition.plural,
      causes: [{ message }],
    });
  }

  /** The kind a policy's paramKind names, in the version it names. */
  private paramKindDefinition(policy: CompiledPolicy): KindDefinition | undefined {
    const { group, version, kind } = policy.paramKind!;
    return this.registry.all().find((k) => k.group === group && k.version === version && k.kind === kind && !k.unlisted);
  }

  /** An object of the param kind as stored, served in the version the paramKind names. */
  private asParam(value: string, kind: KindDefinition): ObjectHeader {
    const stored = JSON.parse(value) as ObjectHeader;
    const served = kind.storedAs ? kind.storedAs.fromStorage(stored) : stored;
    served.apiVersion = apiVersionOf(kind);
    served.kind = kind.kind;
    return served;
  }

  /** generic.CollectParams: the params each evaluation gets (null without paramKind or paramRef). */
  private async collectParams(kind: KindDefinition | undefined, binding: CompiledBinding, a: AdmissionAttributes): Promise<unknown[]> {
    const ref = binding.spec.paramRef;
    if (!kind || !ref) return [null];
    let namespace = "";
    if (kind.namespaced) {
      namespace = ref.namespace || a.namespace;
      if (namespace === "") throw new Error("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources");
    } else if (ref.namespace) {
      throw new Error("paramRef.namespace must not be provided for a cluster-scoped `paramKind`");
    }
    const resource = storageResource(kind);
    let params: unknown[];
    if (ref.name) {
      if (binding.paramSelector) throw new Error("paramRef.name and paramRef.selector are mutually exclusive");
      const stored = await this.storage.get({ resource, namespace, name: ref.name });
      params = stored ? [this.asParam(stored.value, kind)] : [];
    } else if (binding.paramSelector) {
      const selector = binding.paramSelector;
      const listed = await this.storage.list({ resource, ...(kind.namespaced ? { namespace } : {}) });
      params = listed.items
        .map((item) => this.asParam(item.value, kind))
        .filter((p) => labelSelectorMatches(selector, p.metadata.labels ?? {}));
    } else {
      throw new Error("one of name or selector must be provided");
    }
    if (params.length === 0 && ref.parameterNotFoundAction === "Deny") {
      throw new Error("no params found for policy binding with `Deny` parameterNotFoundAction");
    }
    return params;
  }

  /** validator.Validate: matchConditions, then validations with their messages, then audit annotations. */
  private evaluate(
    policy: CompiledPolicy,
    seen: AdmissionAttributes,
    requested: AdmissionAttributes,
    param: unknown,
    namespace: ObjectHeader | undefined,
  ): ValidateResult {
    const fail = policy.failurePolicy !== "Ignore";
    const errorDecision = (message: string): ValidateResult => ({ decisions: [{ deny: fail, error: true, message }], annotations: [] });
    const input = {
      object: seen.object ?? null,
      oldObject: seen.oldObject ?? null,
      request: admissionRequest(seen, requested, ""),
      namespaceObject: namespaceObject(namespace),
      ...(policy.paramKind ? { params: param } : {}),
      authorizer: authorizerFor(authorizationsOf(requested.ctx), {
        group: requested.definition.group,
        resource: requested.definition.plural,
        subresource: requested.subresource,
        namespace: requested.namespace,
        name: requested.name,
      }),
    };
    const activation = (budget: number) => new AdmissionActivation(input, policy.variables, budget);
    if (policy.matchConditions.length > 0) {
      const conditions = activation(MATCH_CONDITIONS_BUDGET);
      const errors: string[] = [];
      for (const condition of policy.matchConditions) {
        const result = conditions.evaluate(condition.compiled);
        if (!result) return errorDecision(OUT_OF_BUDGET);
        if ("error" in result) errors.push(result.error);
        else if (result.value === false) return { decisions: [], annotations: [] };
      }
      if (errors.length > 0) return errorDecision(errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`);
    }
    const validations = activation(ADMISSION_RUNTIME_COST_BUDGET);
    const results = [];
    for (const validation of policy.validations) {
      const result = validations.evaluate(validation.compiled);
      if (!result) return errorDecision(OUT_OF_BUDGET);
      results.push(result);
    }
    const decisions = results.map((result, i): Decision => {
      const validation = policy.validations[i]!;
      if ("error" in result) return { deny: fail, error: true, message: result.error };
      if (result.value === true) return { deny: false, error: false, message: "" };
      return { deny: true, error: false, message: this.message(validation, validations), reason: validation.reason ?? "Invalid" };
    });
    const annotations: ValidateResult["annotations"] = [];
    const values = activation(ADMISSION_RUNTIME_COST_BUDGET);
    for (const annotation of policy.auditAnnotations) {
      const result = values.evaluate(annotation.compiled);
      if (!result) return errorDecision(OUT_OF_BUDGET);
      if ("error" in result) {
        if (fail) annotations.push({ error: result.error });
        continue;
      }
      if (result.value === null) continue;
      if (typeof result.value !== "string") {
        annotations.push({
          error: `valueExpression '${annotation.valueExpression}' resulted in unsupported return type: ${typeof result.value}. Return type must be either string or null.`,
        });
        continue;
      }
      const value = result.value.trim();
      if (value !== "") annotations.push({ key: annotation.key, value: value.slice(0, MAX_AUDIT_ANNOTATION_VALUE_LENGTH) });
    }
    return { decisions, annotations };
  }

  /**
   * A failed validation's message: its messageExpression's string (trimmed, one line, at most 5 KiB),
   * else its message, else `failed expression: <expression>`.
   */
  private message(
    validation: { message: string; expression: string; messageExpression: AdmissionExpression | undefined },
    activation: AdmissionActivation,
  ): string {
    if (validation.messageExpression) {
      const result = activation.evaluate(validation.messageExpression);
      if (result && "value" in result && typeof result.value === "string") {
        const message = result.value.trim();
        if (message !== "" && Buffer.byteLength(message) <= MAX_MESSAGE_BYTES && !message.includes("\n")) return message;
      } else if (result && "error" in result) {
        this.log.debug(`error while evaluating messageExpression: ${result.error}`);
      }
    }
    return validation.message.trim() || `failed expression: ${validation.expression.trim()}`;
  }
}
