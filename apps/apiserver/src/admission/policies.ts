// The ValidatingAdmissionPolicies and their bindings in force, kept from commits (a StorageInformer
// delivers each commit before the write is answered, so a policy applies from the next request) and
// compiled once per change, as Kubernetes' policy source does: a policy is enforced only through
// the bindings that name it.
import type { MatchResources, NamingProfile, ObjectHeader, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "@orch/api";
import { type AdmissionExpression, compileAdmissionExpression } from "@orch/registry";
import type { Logger } from "@orch/log";
import { type LabelSelector, labelSelectorFromObject, labelSelectorIsEverything } from "@orch/machinery";
import { VALIDATING_ADMISSION_POLICIES, VALIDATING_ADMISSION_POLICY_BINDINGS } from "@orch/registry";
import { type Storage, StorageInformer } from "@orch/storage";

const selectorOf = (selector: MatchResources["namespaceSelector"] | undefined): LabelSelector | undefined => {
  const parsed = labelSelectorFromObject(selector ?? {});
  return labelSelectorIsEverything(parsed) ? undefined : parsed;
};

/** A MatchResources with its selectors parsed once (undefined: selects everything). */
export interface CompiledMatch {
  spec: MatchResources;
  namespaceSelector: LabelSelector | undefined;
  objectSelector: LabelSelector | undefined;
}

const compileMatch = (spec: MatchResources): CompiledMatch => ({
  spec,
  namespaceSelector: selectorOf(spec.namespaceSelector),
  objectSelector: selectorOf(spec.objectSelector),
});

export interface CompiledValidation {
  expression: string;
  message: string;
  reason: string | undefined;
  compiled: AdmissionExpression;
  /** Undefined without a messageExpression. */
  messageExpression: AdmissionExpression | undefined;
}

export interface CompiledPolicy {
  name: string;
  spec: NonNullable<ValidatingAdmissionPolicy["spec"]>;
  failurePolicy: string;
  /** Undefined: the policy has no match constraints (a configuration error Kubernetes reports on match). */
  match: CompiledMatch | undefined;
  paramKind: { group: string; version: string; kind: string } | undefined;
  matchConditions: { name: string; compiled: AdmissionExpression }[];
  variables: { name: string; compiled: AdmissionExpression }[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; valueExpression: string; compiled: AdmissionExpression }[];
}

export interface CompiledBinding {
  name: string;
  spec: NonNullable<ValidatingAdmissionPolicyBinding["spec"]>;
  match: CompiledMatch | undefined;
  paramSelector: LabelSelector | undefined;
}

/** A policy with the bindings that name it (Kubernetes' PolicyHook). */
export interface PolicyHook {
  policy: CompiledPolicy;
  bindings: CompiledBinding[];
}

function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? { group: "", version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function compilePolicy(object: ObjectHeader): CompiledPolicy {
  const policy = object as ValidatingAdmissionPolicy;
  const spec = policy.spec ?? {};
  const params = { params: spec.paramKind !== undefined };
  const compile = (expression: string, returns: Parameters<typeof compileAdmissionExpression>[1]) =>
    compileAdmissionExpression(expression, returns, params);
  return {
    name: policy.metadata.name ?? "",
    spec,
    failurePolicy: spec.failurePolicy ?? "Fail",
    match: spec.matchConstraints ? compileMatch(spec.matchConstraints) : undefined,
    paramKind: spec.paramKind ? { ...parseGroupVersion(spec.paramKind.apiVersion ?? ""), kind: spec.paramKind.kind ?? "" } : undefined,
    matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name ?? "", compiled: compile(c.expression ?? "", "bool") })),
    variables: (spec.variables ?? []).map((v) => ({ name: v.name ?? "", compiled: compile(v.expression ?? "", "any") })),
    validations: (spec.validations ?? []).map((v) => ({
      expression: v.expression ?? "",
      message: v.message ?? "",
      reason: v.reason,
      compiled: compile(v.expression ?? "", "bool"),
      // A messageExpression has no `authorizer`, as in Kubernetes.
      messageExpression: v.messageExpression?.trim()
        ? compileAdmissionExpression(v.messageExpression, "string", { ...params, authorizer: false })
        : undefined,
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({
      key: a.key ?? "",
      valueExpression: a.valueExpression ?? "",
      compiled: compile((a.valueExpression ?? "").trim(), "string-or-null"),
    })),
  };
}

function compileBinding(object: ObjectHeader): CompiledBinding {
  const binding = object as ValidatingAdmissionPolicyBinding;
  const spec = binding.spec ?? {};
  return {
    name: binding.metadata.name ?? "",
    spec,
    match: spec.matchResources ? compileMatch(spec.matchResources) : undefined,
    paramSelector: spec.paramRef?.selector ? labelSelectorFromObject(spec.paramRef.selector) : undefined,
  };
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class AdmissionPolicies {
  private readonly policies = new Map<string, CompiledPolicy>();
  private readonly bindings = new Map<string, CompiledBinding>();
  private cached: PolicyHook[] | undefined;
  private readonly informer: StorageInformer<ObjectHeader>;

  private constructor(storage: Storage, profile: NamingProfile, log: Logger) {
    const group = profile.group("admissionregistration");
    const policyResource = `${group}/${VALIDATING_ADMISSION_POLICIES}`;
    const bindingResource = `${group}/${VALIDATING_ADMISSION_POLICY_BINDINGS}`;
    this.informer = new StorageInformer(storage, { resources: [policyResource, bindingResource], log });
    const set = (obj: ObjectHeader, resource: string) => {
      const name = obj.metadata.name ?? "";
      if (resource === policyResource) this.policies.set(name, compilePolicy(obj));
      else this.bindings.set(name, compileBinding(obj));
      this.cached = undefined;
    };
    this.informer.addEventHandler({
      onAdd: (obj, key) => set(obj, key.resource),
      // A status write (type checking) leaves the spec as it was: nothing to compile again.
      onUpdate: (previous, obj, key) => {
        if (key.resource !== policyResource || previous().metadata.generation !== obj.metadata.generation) set(obj, key.resource);
      },
      onDelete: (obj, key) => {
        (key.resource === policyResource ? this.policies : this.bindings).delete(obj.metadata.name ?? "");
        this.cached = undefined;
      },
    });
  }

  static async start(storage: Storage, profile: NamingProfile, log: Logger): Promise<AdmissionPolicies> {
    const policies = new AdmissionPolicies(storage, profile, log);
    await policies.informer.waitForSync();
    return policies;
  }

  /** Whether any policy is bound: without one, policies cost nothing. */
  get empty(): boolean {
    return this.hooks.length === 0;
  }

  /** The bound policies by name, each with its bindings by name; bindings of missing policies are skipped. */
  get hooks(): readonly PolicyHook[] {
    if (this.cached) return this.cached;
    const bound = new Map<string, CompiledBinding[]>();
    for (const binding of this.bindings.values()) {
      const name = binding.spec.policyName ?? "";
      if (!this.policies.has(name)) continue;
      bound.set(name, [...(bound.get(name) ?? []), binding]);
    }
    this.cached = [...bound.keys()].sort(byName).map((name) => ({
      policy: this.policies.get(name)!,
      bindings: bound.get(name)!.sort((a, b) => byName(a.name, b.name)),
    }));
    return this.cached;
  }

  stop(): void {
    this.informer.stop();
  }
}
