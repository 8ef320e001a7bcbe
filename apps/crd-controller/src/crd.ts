// What the three CRD controllers share: the resource, and conditions as apihelpers handles them
// (k8s.io/apiextensions-apiserver/pkg/apihelpers/helpers.go).
import { type CustomResourceDefinition, type NamingProfile, crdConditionTrue, findCrdCondition, setCrdCondition } from "@orch/api";
import type { ResourceRef } from "@orch/client";

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

export const findCondition = findCrdCondition;
export const conditionTrue = crdConditionTrue;

/** Same type, status, reason and message: times and generations aside (IsCRDConditionEquivalent). */
export function equivalent(a: DesiredCondition | undefined, b: DesiredCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return a.type === b.type && a.status === b.status && (a.reason ?? "") === (b.reason ?? "") && (a.message ?? "") === (b.message ?? "");
}

/** SetCRDCondition, recording the generation the condition was decided for. */
export function setCondition(crd: Crd, condition: DesiredCondition): void {
  const observedGeneration = crd.metadata.generation;
  setCrdCondition(crd, { ...condition, ...(observedGeneration ? { observedGeneration } : {}) });
}
