// PriorityClass (scheduling.<domain>/v1, spec 2.10), with Kubernetes' rules:
// - ValidatePriorityClass / ValidatePriorityClassUpdate (pkg/apis/scheduling/validation);
// - the Priority admission plugin's one-default rule (plugin/pkg/admission/priority), as `admit`;
// - the system classes (pkg/apis/scheduling/v1/helpers.go), created at first start.
import { type NamingProfile, type ObjectHeader, PriorityClass } from "@orch/api";
import { type FieldError, errors, fieldError, fieldImmutableErrorMsg } from "@orch/machinery";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { AGE, column, defineKind } from "../../generic/define.js";

/** Priority values above this are reserved for the system classes. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/** Names with this prefix are reserved for the system classes. */
export const SYSTEM_PRIORITY_CLASS_PREFIX = "system-";

const SYSTEM_CLASSES = [
  {
    name: "system-node-critical",
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: "Used for system critical pods that must not be moved from their current node.",
  },
  {
    name: "system-cluster-critical",
    value: SYSTEM_CRITICAL_PRIORITY,
    description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
  },
] as const;

const PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"] as const;

type PriorityClassFields = Partial<Omit<PriorityClass, "metadata">>;
const fields = (o: ObjectHeader) => o as PriorityClassFields;

/** The classes every cluster has, as a client would create them (Kubernetes' SystemPriorityClasses). */
export function systemPriorityClasses(p: NamingProfile): ObjectHeader[] {
  return SYSTEM_CLASSES.map((c) => ({
    apiVersion: `${p.group("scheduling")}/v1`,
    kind: "PriorityClass",
    metadata: { name: c.name },
    value: c.value,
    description: c.description,
  }));
}

/** IsKnownSystemPriorityClass: undefined when name, value and globalDefault match a system class. */
function unknownSystemClass(name: string, value: number | undefined, globalDefault: boolean): string | undefined {
  const known = SYSTEM_CLASSES.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${known.name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${known.name} PriorityClass must be false`;
  return undefined;
}

/** ValidatePreemptionPolicy. */
function validatePreemptionPolicy(policy: string): FieldError[] {
  if ((PREEMPTION_POLICIES as readonly string[]).includes(policy)) return [];
  if (policy === "") return [fieldError.required("preemptionPolicy")];
  return [fieldError.notSupported("preemptionPolicy", policy, PREEMPTION_POLICIES)];
}

function validate(pc: PriorityClass): FieldError[] {
  const name = pc.metadata.name ?? "";
  const errs: FieldError[] = [];
  // Kubernetes decodes a missing value as 0; the spec makes it required.
  if (pc.value === undefined) errs.push(fieldError.required("value"));
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const why = unknownSystemClass(name, pc.value, pc.globalDefault ?? false);
    if (why) {
      errs.push(
        fieldError.forbidden(
          "metadata.name",
          `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${why}`,
        ),
      );
    }
  } else if (pc.value !== undefined && pc.value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(fieldError.forbidden("value", `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (pc.preemptionPolicy !== undefined) errs.push(...validatePreemptionPolicy(pc.preemptionPolicy));
  return errs;
}

/** ValidatePriorityClassUpdate: value and preemptionPolicy never change. */
function validateUpdate(pc: PriorityClass, before: PriorityClass): FieldError[] {
  const errs: FieldError[] = [];
  if (pc.value !== before.value) errs.push(fieldError.forbidden("value", "may not be changed in an update."));
  if (pc.preemptionPolicy !== before.preemptionPolicy) {
    errs.push(fieldError.invalid("preemptionPolicy", pc.preemptionPolicy ?? null, fieldImmutableErrorMsg));
  }
  return errs;
}

/**
 * The Priority admission plugin: a class may be marked default only when no other class is. If a race
 * left several defaults, the one with the lowest value counts, as in Kubernetes.
 */
const oneGlobalDefault =
  (group: string): Strategy<PriorityClass>["admit"] =>
  async (obj, old, _ctx, cluster) => {
    if (obj.globalDefault !== true) return [];
    let current: ObjectHeader | undefined;
    for (const pc of await cluster.list(group, "priorityclasses")) {
      if (fields(pc).globalDefault !== true) continue;
      if (!current || (fields(current).value ?? 0) > (fields(pc).value ?? 0)) current = pc;
    }
    if (current && (!old || current.metadata.name !== obj.metadata.name)) {
      throw errors.forbidden(
        { group, resource: "priorityclasses" },
        obj.metadata.name ?? "",
        `PriorityClass ${current.metadata.name ?? ""} is already marked as default. Only one default can exist`,
      );
    }
    return [];
  };

export const priorityClasses = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("scheduling"),
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    shortNames: ["pc"],
    namespaced: false,
    schema: PriorityClass,
    strategy: {
      validate,
      validateUpdate,
      admit: oneGlobalDefault(p.group("scheduling")),
      beforeDelete(name) {
        if (SYSTEM_CLASSES.some((c) => c.name === name)) {
          throw errors.forbidden(
            { group: p.group("scheduling"), resource: "priorityclasses" },
            name,
            "this is a system priority class and cannot be deleted",
          );
        }
      },
    },
    printerColumns: [
      column("Value", "integer", (o) => o.value),
      column("Global-Default", "boolean", (o) => o.globalDefault ?? false),
      AGE,
      column("PreemptionPolicy", "string", (o) => o.preemptionPolicy),
    ],
  });
