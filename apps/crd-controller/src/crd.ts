// What the three CRD controllers share: the resource, and conditions as apihelpers handles them
// (k8s.io/apiextensions-apiserver/pkg/apihelpers/helpers.go).
import type { CustomResourceDefinition, NamingProfile } from "@orch/api";
import type { ResourceRef } from "@orch/client";
import { rfc3339 } from "@orch/machinery";

export type Crd = CustomResourceDefinition;
export type CrdCondition = NonNullable<NonNullable<Crd["status"]["conditions"]>>[number];
/** A condition as a controller decides it; the transition time and generation are filled in when set. */
export type DesiredCondition = Pick<CrdCondition, "type" | "status" | "reason" | "message">;

export const crdResource = (profile: NamingProfile): ResourceRef => ({
  group: profile.group("apiextensions"),
  version: "v1",
  plural: "customresourcedefinitions",
  namespaced: false,
});

export const findCondition = (crd: Crd, type: string): CrdCondition | undefined =>
  crd.status?.conditions?.find((c) => c.type === type);

export const conditionTrue = (crd: Crd, type: string): boolean => findCondition(crd, type)?.status === "True";

/** Same type, status, reason and message: times and generations aside (IsCRDConditionEquivalent). */
export function equivalent(a: DesiredCondition | undefined, b: DesiredCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return a.type === b.type && a.status === b.status && (a.reason ?? "") === (b.reason ?? "") && (a.message ?? "") === (b.message ?? "");
}

/**
 * SetCRDCondition: overwrites the condition of that type or appends it; the transition time moves only
 * when the status changes. The condition records the generation it was decided for.
 */
export function setCondition(crd: Crd, condition: DesiredCondition): void {
  crd.status ??= {};
  const conditions = (crd.status.conditions ??= []);
  const observedGeneration = crd.metadata.generation;
  const existing = conditions.find((c) => c.type === condition.type);
  if (!existing) {
    conditions.push({ ...condition, lastTransitionTime: rfc3339(), ...(observedGeneration ? { observedGeneration } : {}) });
    return;
  }
  if (existing.status !== condition.status || !existing.lastTransitionTime) existing.lastTransitionTime = rfc3339();
  existing.status = condition.status;
  existing.reason = condition.reason;
  existing.message = condition.message;
  if (observedGeneration) existing.observedGeneration = observedGeneration;
}
