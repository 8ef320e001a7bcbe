// Validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding as Kubernetes 1.32's
// pkg/apis/admissionregistration/validation/validation.go does it (same paths, same texts): the
// match constraints, the paramKind, every CEL expression compiled in the admission environment
// (libs/cel/src/admission-expressions.ts: `params` only with a paramKind), reasons, audit annotation
// keys, variable names; a binding's policy name, paramRef and validationActions.
import type {
  MatchResources,
  NamedRuleWithOperations,
  ParamRef,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from "@orch/api";
import { type ExpressionReturn, compileAdmissionExpression, isCelIdentifier } from "@orch/cel";
import {
  type FieldError,
  FieldPath,
  fieldError,
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPathSegmentName,
  jsonEqual,
  validateLabelSelector,
} from "@orch/machinery";
import { FAILURE_POLICIES, MATCH_POLICIES, validateMatchConditions, validateRule } from "./webhook-validation.js";

const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;
/** supportedValidationPolicyReason, as sets.List() sorts it. */
const REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"] as const;
/** validValidationActions, sorted. */
const VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"] as const;
const PARAMETER_NOT_FOUND_ACTIONS = ["Deny", "Allow"] as const;

const oneOf = (allowed: readonly string[], value: string) => allowed.includes(value);

/** convertCELErrorToValidationError for the compile errors of one expression. */
function compileErrors(
  expression: string,
  returns: ExpressionReturn,
  params: boolean,
  at: FieldPath,
  shown = expression,
  authorizer = true,
): FieldError[] {
  const { error } = compileAdmissionExpression(expression, returns, { params, authorizer });
  return error ? [fieldError.invalid(at, shown, error)] : [];
}

/** parseGroupVersion: "group/version", "version", "" or "/". */
function parseGroupVersion(gv: string): { group: string; version: string } | string {
  if (gv === "" || gv === "/") return { group: "", version: "" };
  const parts = gv.split("/");
  if (parts.length === 1) return { group: "", version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return `unexpected GroupVersion string: ${gv}`;
}

/** validateParamKind. */
function validateParamKind(kind: { apiVersion?: string; kind?: string }, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = kind.apiVersion ?? "";
  if (apiVersion === "") errs.push(fieldError.required(at.child("apiVersion")));
  else {
    const gv = parseGroupVersion(apiVersion);
    if (typeof gv === "string") errs.push(fieldError.invalid(at.child("apiVersion"), apiVersion, gv));
    else {
      if (gv.group !== "") {
        const problems = isDNS1123Subdomain(gv.group);
        if (problems.length) errs.push(fieldError.invalid(at.child("apiVersion"), gv.group, problems.join(",")));
      }
      if (gv.version === "") errs.push(fieldError.invalid(at.child("apiVersion"), apiVersion, "version must be specified"));
      else {
        const problems = isDNS1035Label(gv.version);
        if (problems.length) errs.push(fieldError.invalid(at.child("apiVersion"), gv.version, problems.join(",")));
      }
    }
  }
  const k = kind.kind ?? "";
  if (k === "") errs.push(fieldError.required(at.child("kind")));
  else {
    const problems = isDNS1035Label(k.toLowerCase());
    if (problems.length)
      errs.push(fieldError.invalid(at.child("kind"), k, `may have mixed case, but should otherwise match: ${problems.join(",")}`));
  }
  return errs;
}

/** validateNamedRuleWithOperations. */
function validateNamedRule(rule: NamedRuleWithOperations, at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (rule.resourceNames ?? []).forEach((name, i) => {
    const nameAt = at.child("resourceNames").index(i);
    for (const problem of isValidPathSegmentName(name)) errs.push(fieldError.invalid(nameAt, name, problem));
    if (seen.has(name)) errs.push(fieldError.duplicate(nameAt, name));
    else seen.add(name);
  });
  errs.push(...validateRule(rule, at));
  return errs;
}

/** validateMatchResources (the selectors strictly, this type came after Kubernetes' issue 99139). */
function validateMatchResources(match: MatchResources | undefined, at: FieldPath): FieldError[] {
  if (!match) return [];
  const errs: FieldError[] = [];
  if (match.matchPolicy === undefined) errs.push(fieldError.required(at.child("matchPolicy")));
  else if (!oneOf(MATCH_POLICIES, match.matchPolicy))
    errs.push(fieldError.notSupported(at.child("matchPolicy"), match.matchPolicy, MATCH_POLICIES));
  errs.push(...validateLabelSelector(match.namespaceSelector, at.child("namespaceSelector")));
  errs.push(...validateLabelSelector(match.objectSelector, at.child("objectSelector")));
  (match.resourceRules ?? []).forEach((rule, i) => errs.push(...validateNamedRule(rule, at.child("resourceRules").index(i))));
  (match.excludeResourceRules ?? []).forEach((rule, i) => errs.push(...validateNamedRule(rule, at.child("excludeResourceRules").index(i))));
  return errs;
}

const hasNewlines = (s: string) => /[\n\r]+/.test(s);

type PolicySpec = NonNullable<ValidatingAdmissionPolicy["spec"]>;

/** validateValidatingAdmissionPolicySpec; `ignoreMatchConditions` on an update that left them as they were. */
function validatePolicySpec(name: string, spec: PolicySpec, ignoreMatchConditions: boolean): FieldError[] {
  const at = FieldPath.root("spec");
  const errs: FieldError[] = [];
  const params = spec.paramKind !== undefined;
  if (spec.failurePolicy === undefined) errs.push(fieldError.required(at.child("failurePolicy")));
  else if (!oneOf(FAILURE_POLICIES, spec.failurePolicy))
    errs.push(fieldError.notSupported(at.child("failurePolicy"), spec.failurePolicy, FAILURE_POLICIES));
  if (spec.paramKind) errs.push(...validateParamKind(spec.paramKind, at.child("paramKind")));
  if (!spec.matchConstraints) errs.push(fieldError.required(at.child("matchConstraints")));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, at.child("matchConstraints")));
    // At least one resource rule, to give the expressions type information.
    if ((spec.matchConstraints.resourceRules ?? []).length === 0)
      errs.push(fieldError.required(at.child("matchConstraints").child("resourceRules")));
  }
  if (!ignoreMatchConditions) {
    errs.push(
      ...validateMatchConditions(spec.matchConditions, at.child("matchConditions"), (e) =>
        compileAdmissionExpression(e, "bool", { params }),
      ),
    );
  }
  (spec.variables ?? []).forEach((variable, i) => {
    const vat = at.child("variables").index(i);
    const vname = variable.name ?? "";
    if (vname.trim() === "") errs.push(fieldError.required(vat.child("name"), "name is not specified"));
    else if (!isCelIdentifier(vname)) errs.push(fieldError.invalid(vat.child("name"), vname, "name is not a valid CEL identifier"));
    const expression = variable.expression ?? "";
    if (expression.trim() === "") errs.push(fieldError.required(vat.child("expression"), "expression is not specified"));
    else errs.push(...compileErrors(expression, "any", params, vat.child("expression")));
  });
  const validations = spec.validations ?? [];
  const auditAnnotations = spec.auditAnnotations ?? [];
  if (validations.length === 0 && auditAnnotations.length === 0) {
    const why = "validations or auditAnnotations must contain at least one item";
    errs.push(fieldError.required(at.child("validations"), why), fieldError.required(at.child("auditAnnotations"), why));
    return errs;
  }
  validations.forEach((validation, i) => {
    const vat = at.child("validations").index(i);
    const expression = validation.expression ?? "";
    if (expression.trim() === "") errs.push(fieldError.required(vat.child("expression"), "expression is not specified"));
    else errs.push(...compileErrors(expression, "bool", params, vat.child("expression")));
    const messageExpression = validation.messageExpression ?? "";
    if (messageExpression.length > 0 && messageExpression.trim() === "") {
      errs.push(fieldError.invalid(vat.child("messageExpression"), messageExpression, "must be non-empty if specified"));
    } else if (messageExpression.trim() !== "") {
      // Without `authorizer`, as Kubernetes compiles a messageExpression.
      errs.push(...compileErrors(messageExpression, "string", params, vat.child("messageExpression"), messageExpression, false));
    }
    const message = validation.message ?? "";
    if (message.length > 0 && message.trim() === "") {
      errs.push(fieldError.invalid(vat.child("message"), message, "message must be non-empty if specified"));
    } else if (hasNewlines(message.trim())) {
      errs.push(fieldError.invalid(vat.child("message"), message, "message must not contain line breaks"));
    }
    if (validation.reason !== undefined && !oneOf(REASONS, validation.reason)) {
      errs.push(fieldError.notSupported(vat.child("reason"), validation.reason, REASONS));
    }
  });
  if (auditAnnotations.length > MAX_AUDIT_ANNOTATIONS) {
    errs.push(
      fieldError.invalid(
        at.child("auditAnnotations"),
        auditAnnotations,
        `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`,
      ),
    );
  }
  const keys = new Set<string>();
  auditAnnotations.forEach((annotation, i) => {
    const aat = at.child("auditAnnotations").index(i);
    const key = annotation.key ?? "";
    if (name !== "") {
      for (const problem of isQualifiedName(`${name}/${key}`)) errs.push(fieldError.invalid(aat.child("key"), `${name}/${key}`, problem));
    } else errs.push(fieldError.invalid(aat.child("key"), key, "requires metadata.name be non-empty"));
    const valueExpression = (annotation.valueExpression ?? "").trim();
    if (valueExpression === "") errs.push(fieldError.required(aat.child("valueExpression"), "valueExpression is not specified"));
    else if (valueExpression.length > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH) {
      errs.push(
        fieldError.required(
          aat.child("valueExpression"),
          `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`,
        ),
      );
    } else errs.push(...compileErrors(valueExpression, "string-or-null", params, aat.child("valueExpression"), annotation.valueExpression));
    if (keys.has(key)) errs.push(fieldError.duplicate(aat.child("key"), key));
    keys.add(key);
  });
  return errs;
}

export function validatePolicy(policy: ValidatingAdmissionPolicy, old?: ValidatingAdmissionPolicy): FieldError[] {
  const spec = policy.spec ?? {};
  // ignoreValidatingAdmissionPolicyMatchConditions: conditions stored before stay as they were.
  const unchanged = old !== undefined && jsonEqual(spec.matchConditions ?? [], old.spec?.matchConditions ?? []);
  return validatePolicySpec(policy.metadata.name ?? "", spec, unchanged);
}

/** validateValidatingAdmissionPolicyStatus: each type-checking warning names its field and says something. */
export function validatePolicyStatus(policy: ValidatingAdmissionPolicy): FieldError[] {
  const errs: FieldError[] = [];
  const at = FieldPath.root("status").child("typeChecking").child("expressionWarnings");
  (policy.status?.typeChecking?.expressionWarnings ?? []).forEach((warning, i) => {
    if (!warning.warning) errs.push(fieldError.required(at.index(i).child("warning")));
    if ((warning.fieldRef ?? "").trim() === "") errs.push(fieldError.required(at.index(i).child("fieldRef")));
  });
  return errs;
}

/** validateParamRef. */
function validateParamRef(ref: ParamRef | undefined, at: FieldPath): FieldError[] {
  if (!ref) return [];
  const errs: FieldError[] = [];
  const name = ref.name ?? "";
  const exclusive = "name and selector are mutually exclusive";
  if (name !== "") {
    for (const problem of isValidPathSegmentName(name)) errs.push(fieldError.invalid(at.child("name"), name, problem));
    if (ref.selector) errs.push(fieldError.forbidden(at.child("name"), exclusive));
  }
  if (ref.selector) {
    errs.push(...validateLabelSelector(ref.selector, at.child("selector")));
    if (name !== "") errs.push(fieldError.forbidden(at.child("selector"), exclusive));
  }
  if (name === "" && !ref.selector) errs.push(fieldError.required(at, "one of name or selector must be specified"));
  const action = ref.parameterNotFoundAction ?? "";
  if (action === "") errs.push(fieldError.required(at.child("parameterNotFoundAction")));
  else if (!oneOf(PARAMETER_NOT_FOUND_ACTIONS, action)) {
    errs.push(fieldError.notSupported(at.child("parameterNotFoundAction"), action, PARAMETER_NOT_FOUND_ACTIONS));
  }
  return errs;
}

/** validateValidationActions: known, unique, not both Deny and Warn, at least one. */
function validateValidationActions(actions: readonly string[], at: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (!oneOf(VALIDATION_ACTIONS, action)) errs.push(fieldError.notSupported(at.index(i), action, VALIDATION_ACTIONS));
    if (seen.has(action)) errs.push(fieldError.duplicate(at.index(i), action));
    seen.add(action);
  });
  if (seen.has("Deny") && seen.has("Warn")) {
    errs.push(
      fieldError.invalid(
        at,
        actions,
        "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
      ),
    );
  }
  if (seen.size === 0) errs.push(fieldError.required(at, "at least one validation action is required"));
  return errs;
}

/** validateValidatingAdmissionPolicyBindingSpec. */
export function validateBinding(binding: ValidatingAdmissionPolicyBinding): FieldError[] {
  const spec = binding.spec ?? {};
  const at = FieldPath.root("spec");
  const errs: FieldError[] = [];
  const policyName = spec.policyName ?? "";
  if (policyName === "") errs.push(fieldError.required(at.child("policyName")));
  else for (const problem of isDNS1123Subdomain(policyName)) errs.push(fieldError.invalid(at.child("policyName"), policyName, problem));
  errs.push(...validateParamRef(spec.paramRef, at.child("paramRef")));
  errs.push(...validateMatchResources(spec.matchResources, at.child("matchResources")));
  errs.push(...validateValidationActions(spec.validationActions ?? [], at.child("validationActions")));
  return errs;
}
