// Validation of admission webhook configurations, as k8s.io/kubernetes
// pkg/apis/admissionregistration/validation/validation.go does it for v1 (same paths, same texts):
// fully qualified unique webhook names, exactly one of url/service, https only, rules, policies,
// sideEffects None/NoneOnDryRun, timeouts of 1–30 s, known admissionReviewVersions, selectors.
import type { MutatingWebhook, RuleWithOperations, ValidatingWebhook, AdmissionWebhookClientConfig } from "@orch/api";
import {
  type FieldError,
  FieldPath,
  fieldError,
  goBase64Error,
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  validateLabelSelector,
} from "@orch/machinery";
import { compileMatchCondition } from "@orch/cel";
import { isValidPortNum } from "../core/pod-validation-formats.js";

/** The AdmissionReview versions orch speaks; a webhook must accept one of them. */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1"] as const;
const OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"] as const;
const SCOPES = ["*", "Cluster", "Namespaced"] as const;
export const FAILURE_POLICIES = ["Fail", "Ignore"] as const;
export const MATCH_POLICIES = ["Equivalent", "Exact"] as const;
const NO_SIDE_EFFECT_CLASSES = ["None", "NoneOnDryRun"] as const;
const REINVOCATION_POLICIES = ["IfNeeded", "Never"] as const;
const MAX_MATCH_CONDITIONS = 64;

const oneOf = (allowed: readonly string[], value: string) => allowed.includes(value);

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain with at least three segments. */
function validateFullyQualifiedName(name: string, at: FieldPath): FieldError[] {
  if (name === "") return [fieldError.required(at)];
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name;
  const errs: FieldError[] = [];
  const problems = isDNS1123Subdomain(trimmed);
  if (problems.length > 0) errs.push(fieldError.invalid(at, trimmed, problems.join(",")));
  if (trimmed.split(".").length < 3)
    errs.push(fieldError.invalid(at, trimmed, "should be a domain with at least three segments separated by dots"));
  return errs;
}

/** A list with `*` must hold nothing else. */
function wildcardAlone(list: readonly string[], at: FieldPath, what: string): FieldError[] {
  return list.length > 1 && list.includes("*") ? [fieldError.invalid(at, list, `if '*' is present, must not specify other ${what}`)] : [];
}

/** validateResources: `x`, `x/y`, `x/*`, `*` and `*` forms that do not overlap. */
function validateResources(resources: readonly string[], at: FieldPath): FieldError[] {
  if (resources.length === 0) return [fieldError.required(at)];
  const errs: FieldError[] = [];
  const withWildcardSubresource = new Set<string>();
  const subresourceOfWildcard = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSubresource = false;
  resources.forEach((entry, i) => {
    if (entry === "") {
      errs.push(fieldError.required(at.index(i)));
      return;
    }
    if (entry === "*/*") doubleWildcard = true;
    if (entry === "*") singleWildcard = true;
    const slash = entry.indexOf("/");
    if (slash < 0) {
      withoutSubresource = entry !== "*";
      return;
    }
    const resource = entry.slice(0, slash);
    const subresource = entry.slice(slash + 1);
    if (withWildcardSubresource.has(resource)) {
      errs.push(fieldError.invalid(at.index(i), entry, `if '${resource}/*' is present, must not specify ${entry}`));
    }
    if (subresourceOfWildcard.has(subresource)) {
      errs.push(fieldError.invalid(at.index(i), entry, `if '*/${subresource}' is present, must not specify ${entry}`));
    }
    if (subresource === "*") withWildcardSubresource.add(resource);
    if (resource === "*") subresourceOfWildcard.add(subresource);
  });
  if (resources.length > 1 && doubleWildcard)
    errs.push(fieldError.invalid(at, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSubresource) {
    errs.push(fieldError.invalid(at, resources, "if '*' is present, must not specify other resources without subresources"));
  }
  return errs;
}

/** validateRuleWithOperations and validateRule. */
export function validateRule(rule: RuleWithOperations, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const operations = rule.operations ?? [];
  if (operations.length === 0) errs.push(fieldError.required(at.child("operations")));
  errs.push(...wildcardAlone(operations, at.child("operations"), "operations"));
  operations.forEach((op, i) => {
    if (!oneOf(OPERATIONS, op)) errs.push(fieldError.notSupported(at.child("operations").index(i), op, OPERATIONS));
  });
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0) errs.push(fieldError.required(at.child("apiGroups")));
  errs.push(...wildcardAlone(groups, at.child("apiGroups"), "API groups"));
  const versions = rule.apiVersions ?? [];
  if (versions.length === 0) errs.push(fieldError.required(at.child("apiVersions")));
  errs.push(...wildcardAlone(versions, at.child("apiVersions"), "API versions"));
  versions.forEach((version, i) => {
    if (version === "") errs.push(fieldError.required(at.child("apiVersions").index(i)));
  });
  errs.push(...validateResources(rule.resources ?? [], at.child("resources")));
  if (rule.scope !== undefined && !oneOf(SCOPES, rule.scope)) errs.push(fieldError.notSupported(at.child("scope"), rule.scope, SCOPES));
  return errs;
}

/** webhook.ValidateWebhookURL with https forced (CRD conversion webhooks too). */
export function validateWebhookUrl(text: string, at: FieldPath): FieldError[] {
  const form = "; desired format: https://host[/path]";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [fieldError.required(at, `url must be a valid URL: parse ${JSON.stringify(text)}: invalid URI for request${form}`)];
  }
  const errs: FieldError[] = [];
  const scheme = url.protocol.replace(/:$/, "");
  if (scheme !== "https") errs.push(fieldError.invalid(at, scheme, `'https' is the only allowed URL scheme${form}`));
  if (url.host === "") errs.push(fieldError.invalid(at, url.host, `host must be specified${form}`));
  if (url.username || url.password) {
    const user = url.password ? `${url.username}:${url.password}` : url.username;
    errs.push(fieldError.invalid(at, user, "user information is not permitted in the URL"));
  }
  if (url.hash.length > 1) errs.push(fieldError.invalid(at, url.hash.slice(1), "fragments are not permitted in the URL"));
  if (url.search.length > 1) errs.push(fieldError.invalid(at, url.search.slice(1), "query parameters are not permitted in the URL"));
  return errs;
}

/** webhook.ValidateWebhookService (CRD conversion webhooks too). */
export function validateWebhookService(
  service: Partial<NonNullable<AdmissionWebhookClientConfig["service"]>>,
  at: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldError.required(at.child("name"), "service name is required"));
  if (!service.namespace) errs.push(fieldError.required(at.child("namespace"), "service namespace is required"));
  const port = service.port ?? 443;
  const portErrors = isValidPortNum(port);
  if (portErrors.length > 0) errs.push(fieldError.invalid(at.child("port"), port, `port is not valid: ${portErrors.join(", ")}`));
  const path = service.path;
  if (path === undefined || path === "" || path === "/") return errs;
  if (path === "//") return [...errs, fieldError.invalid(at.child("path"), path, "segment[0] may not be empty")];
  if (!path.startsWith("/")) errs.push(fieldError.invalid(at.child("path"), path, "must start with a '/'"));
  let steps = path.slice(1);
  if (steps.endsWith("/")) steps = steps.slice(0, -1);
  steps.split("/").forEach((step, i) => {
    if (step === "") {
      errs.push(fieldError.invalid(at.child("path"), path, `segment[${i}] may not be empty`));
      return;
    }
    for (const problem of isDNS1123Subdomain(step)) errs.push(fieldError.invalid(at.child("path"), path, `segment[${i}]: ${problem}`));
  });
  return errs;
}

function validateClientConfig(config: AdmissionWebhookClientConfig | undefined, at: FieldPath): FieldError[] {
  const hasUrl = config?.url !== undefined;
  const hasService = config?.service !== undefined;
  if (hasUrl === hasService) return [fieldError.required(at, "exactly one of url or service is required")];
  return hasUrl ? validateWebhookUrl(config!.url!, at.child("url")) : validateWebhookService(config!.service!, at.child("service"));
}

/** validateAdmissionReviewVersions, requiring one orch speaks. */
function validateAdmissionReviewVersions(versions: readonly string[], at: FieldPath): FieldError[] {
  if (versions.length === 0) return [fieldError.required(at, `must specify one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(", ")}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((version, i) => {
    if (seen.has(version)) {
      errs.push(fieldError.invalid(at.index(i), version, "duplicate version"));
      return;
    }
    seen.add(version);
    for (const problem of isDNS1035Label(version)) errs.push(fieldError.invalid(at.index(i), version, problem));
  });
  if (!versions.some((v) => oneOf(ACCEPTED_ADMISSION_REVIEW_VERSIONS, v))) {
    errs.push(fieldError.invalid(at, versions, `must include at least one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(", ")}`));
  }
  return errs;
}

/**
 * validateMatchConditions: at most 64, each an expression that compiles to a bool (with `params` in a
 * policy that has a paramKind) and a qualified name, names unique.
 */
export function validateMatchConditions(
  conditions: ValidatingWebhook["matchConditions"],
  at: FieldPath,
  compile: (expression: string) => { error?: string } = compileMatchCondition,
): FieldError[] {
  const list = conditions ?? [];
  const errs: FieldError[] = [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(fieldError.tooMany(at, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  list.forEach((condition, i) => {
    const expression = (condition.expression ?? "").trim();
    if (expression === "") errs.push(fieldError.required(at.index(i).child("expression")));
    else {
      const compiled = compile(expression);
      if (compiled.error) errs.push(fieldError.invalid(at.index(i).child("expression"), expression, compiled.error));
    }
    const name = condition.name ?? "";
    const nameAt = at.index(i).child("name");
    if (name === "") errs.push(fieldError.required(nameAt));
    else for (const problem of isQualifiedName(name)) errs.push(fieldError.invalid(nameAt, name, problem));
    if (name !== "") {
      if (names.has(name)) errs.push(fieldError.duplicate(nameAt, name));
      names.add(name);
    }
  });
  return errs;
}

/** validateValidatingWebhook / validateMutatingWebhook, with the configuration's per-webhook checks. */
function validateWebhook(hook: ValidatingWebhook & { reinvocationPolicy?: string }, at: FieldPath): FieldError[] {
  const errs = validateFullyQualifiedName(hook.name ?? "", at.child("name"));
  (hook.rules ?? []).forEach((rule, i) => errs.push(...validateRule(rule, at.child("rules").index(i))));
  if (hook.failurePolicy !== undefined && !oneOf(FAILURE_POLICIES, hook.failurePolicy)) {
    errs.push(fieldError.notSupported(at.child("failurePolicy"), hook.failurePolicy, FAILURE_POLICIES));
  }
  if (hook.matchPolicy !== undefined && !oneOf(MATCH_POLICIES, hook.matchPolicy)) {
    errs.push(fieldError.notSupported(at.child("matchPolicy"), hook.matchPolicy, MATCH_POLICIES));
  }
  if (hook.sideEffects === undefined) {
    errs.push(fieldError.required(at.child("sideEffects"), `must specify one of ${NO_SIDE_EFFECT_CLASSES.join(", ")}`));
  } else if (!oneOf(NO_SIDE_EFFECT_CLASSES, hook.sideEffects)) {
    errs.push(fieldError.notSupported(at.child("sideEffects"), hook.sideEffects, NO_SIDE_EFFECT_CLASSES));
  }
  const timeout = hook.timeoutSeconds;
  if (timeout !== undefined && (timeout > 30 || timeout < 1)) {
    errs.push(fieldError.invalid(at.child("timeoutSeconds"), timeout, "the timeout value must be between 1 and 30 seconds"));
  }
  errs.push(...validateLabelSelector(hook.namespaceSelector, at.child("namespaceSelector")));
  errs.push(...validateLabelSelector(hook.objectSelector, at.child("objectSelector")));
  if (hook.reinvocationPolicy !== undefined && !oneOf(REINVOCATION_POLICIES, hook.reinvocationPolicy)) {
    errs.push(fieldError.notSupported(at.child("reinvocationPolicy"), hook.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  errs.push(...validateClientConfig(hook.clientConfig, at.child("clientConfig")));
  errs.push(...validateMatchConditions(hook.matchConditions, at.child("matchConditions")));
  return errs;
}

/** validateValidatingWebhookConfiguration / validateMutatingWebhookConfiguration (ObjectMeta is the store's). */
export function validateWebhookConfiguration(webhooks: readonly (ValidatingWebhook | MutatingWebhook)[] | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (webhooks ?? []).forEach((hook, i) => {
    const at = FieldPath.root("webhooks").index(i);
    errs.push(...validateWebhook(hook, at));
    errs.push(...validateAdmissionReviewVersions(hook.admissionReviewVersions ?? [], at.child("admissionReviewVersions")));
    const name = hook.name ?? "";
    if (name !== "") {
      if (names.has(name)) errs.push(fieldError.duplicate(at.child("name"), name));
      names.add(name);
    }
  });
  return errs;
}

/** caBundle is `[]byte`: bad base64 is a decoding error (400), as Go's JSON decoder reports it. */
export function caBundleDecodingError(webhooks: readonly (ValidatingWebhook | MutatingWebhook)[] | undefined): string | undefined {
  for (const hook of webhooks ?? []) {
    const bundle = hook.clientConfig?.caBundle;
    const error = bundle === undefined ? undefined : goBase64Error(bundle);
    if (error) return error;
  }
  return undefined;
}
