// The audit policy file (audit.k8s.io/v1 Policy), read and checked as Kubernetes' --audit-policy-file is
// (k8s.io/apiserver pkg/audit/policy/reader.go and pkg/apis/audit/validation): YAML or JSON, apiVersion
// audit.k8s.io/v1, at least one rule, every rule valid. Fields Kubernetes does not know are ignored, as
// its decoder ignores them.
import { type FieldError, FieldPath, fieldError, fieldErrorText, goAggregate, isDNS1123Subdomain } from "@orch/machinery";
import { readFile } from "node:fs/promises";
import * as v from "valibot";
import { parse as parseYaml } from "yaml";

export const LEVELS = ["None", "Metadata", "Request", "RequestResponse"] as const;
export type Level = (typeof LEVELS)[number];

export const STAGES = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"] as const;
export type Stage = (typeof STAGES)[number];

export const AUDIT_API_VERSION = "audit.k8s.io/v1";

const strings = v.optional(v.array(v.string()), []);

const GroupResources = v.object({
  group: v.optional(v.string(), ""),
  resources: strings,
  resourceNames: strings,
});

// Levels and stages are plain strings here: validation names the bad ones with Kubernetes' messages.
const PolicyRule = v.object({
  level: v.optional(v.string(), ""),
  users: strings,
  userGroups: strings,
  verbs: strings,
  resources: v.optional(v.array(GroupResources), []),
  namespaces: strings,
  nonResourceURLs: strings,
  omitStages: strings,
  /** Unset: the policy's own omitManagedFields. */
  omitManagedFields: v.optional(v.boolean()),
});

const PolicyDocument = v.object({
  apiVersion: v.optional(v.string(), ""),
  kind: v.optional(v.string(), ""),
  rules: v.optional(v.array(PolicyRule), []),
  omitStages: strings,
  omitManagedFields: v.optional(v.boolean(), false),
});

export type GroupResources = v.InferOutput<typeof GroupResources>;
export type PolicyRule = v.InferOutput<typeof PolicyRule> & { level: Level; omitStages: Stage[] };
export type Policy = Omit<v.InferOutput<typeof PolicyDocument>, "rules" | "omitStages"> & { rules: PolicyRule[]; omitStages: Stage[] };

/** A policy that cannot be used; the message says what is wrong and where. */
export class PolicyError extends Error {
  override name = "PolicyError";
}

/** Reads and checks a policy file; throws a `PolicyError` naming the file. */
export async function loadPolicyFile(path: string): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new PolicyError(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  try {
    return parsePolicy(text);
  } catch (e) {
    if (e instanceof PolicyError) throw new PolicyError(`loading audit policy file: ${e.message}: from file ${path}`);
    throw e;
  }
}

/** A policy from its YAML or JSON text (JSON is YAML). */
export function parsePolicy(text: string): Policy {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new PolicyError(`failed decoding: ${(e as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new PolicyError("failed decoding: the policy is not an object");
  const decoded = v.safeParse(PolicyDocument, raw);
  if (!decoded.success) {
    const issue = decoded.issues[0];
    const path = v.getDotPath(issue) ?? "";
    throw new PolicyError(`failed decoding: ${path ? `${path}: ` : ""}${issue.message}`);
  }
  const document = decoded.output;
  if (document.kind === "") throw new PolicyError("failed decoding: Object 'Kind' is missing");
  if (document.apiVersion !== AUDIT_API_VERSION || document.kind !== "Policy") {
    throw new PolicyError(`unknown group version field ${JSON.stringify(`${document.apiVersion}, Kind=${document.kind}`)} in policy`);
  }
  const errors = validatePolicy(document);
  if (errors.length > 0) throw new PolicyError(goAggregate(errors.map(fieldErrorText)));
  if (document.rules.length === 0) throw new PolicyError("loaded illegal policy with 0 rules");
  return document as Policy;
}

/** Kubernetes' ValidatePolicy: levels, stages, URLs and resources of each rule. */
function validatePolicy(policy: v.InferOutput<typeof PolicyDocument>): FieldError[] {
  const errors: FieldError[] = [];
  // Kubernetes checks the policy-wide omitStages only by using them; an unknown stage there would just
  // never match, so it is refused here too rather than silently ignored.
  errors.push(...validateOmitStages(policy.omitStages, FieldPath.root("omitStages")));
  policy.rules.forEach((rule, i) => {
    const at = FieldPath.root("rules").index(i);
    errors.push(...validateLevel(rule.level, at.child("level")));
    errors.push(...validateNonResourceURLs(rule.nonResourceURLs, at.child("nonResourceURLs")));
    errors.push(...validateResources(rule.resources, at.child("resources")));
    errors.push(...validateOmitStages(rule.omitStages, at.child("omitStages")));
    if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
      errors.push(
        fieldError.invalid(
          at.child("nonResourceURLs"),
          rule.nonResourceURLs,
          "rules cannot apply to both regular resources and non-resource URLs",
        ),
      );
    }
  });
  return errors;
}

function validateLevel(level: string, at: FieldPath): FieldError[] {
  if (level === "") return [fieldError.required(at)];
  return (LEVELS as readonly string[]).includes(level) ? [] : [fieldError.notSupported(at, level, LEVELS)];
}

function validateNonResourceURLs(urls: string[], at: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  urls.forEach((url, i) => {
    if (url === "*") return;
    if (!url.startsWith("/")) errors.push(fieldError.invalid(at.index(i), url, "non-resource URL rules must begin with a '/' character"));
    if (url !== "" && url.slice(0, -1).includes("*")) {
      errors.push(fieldError.invalid(at.index(i), url, "non-resource URL wildcards '*' must be the final character of the rule"));
    }
  });
  return errors;
}

function validateResources(groups: GroupResources[], at: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  for (const group of groups) {
    // Kubernetes names these fields without the list index; so do we.
    if (group.group !== "") {
      const problems = isDNS1123Subdomain(group.group);
      if (problems.length > 0) errors.push(fieldError.invalid(at.child("group"), group.group, problems.join(",")));
    }
    if (group.resourceNames.length > 0 && group.resources.length === 0) {
      errors.push(fieldError.invalid(at.child("resourceNames"), group.resourceNames, "using resourceNames requires at least one resource"));
    }
  }
  return errors;
}

function validateOmitStages(stages: string[], at: FieldPath): FieldError[] {
  return stages.flatMap((stage, i) =>
    (STAGES as readonly string[]).includes(stage) ? [] : [fieldError.invalid(at.index(i), stage, `allowed stages are ${STAGES.join(",")}`)],
  );
}
