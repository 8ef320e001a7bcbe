// Resource requirements of containers (and pod overhead): Kubernetes' validateResourceRequirements,
// validateContainerResourceName and ValidateResourceQuantityValue, with the quantities parsed exactly.
import type { ResourceRequirements } from "@orch/api";
import {
  type FieldError,
  type FieldPath,
  type Quantity,
  compareQuantities,
  fieldError,
  formatQuantity,
  isQualifiedName,
  parseQuantityJSON,
  quantityMilliValue,
  quantitySign,
  quantityValue,
} from "@orch/machinery";
import { dnsLabel, qualifiedName } from "./pod-validation-formats.js";

const STANDARD_RESOURCES = new Set([
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "storage",
  "requests.storage",
  "services.nodeports",
  "services.loadbalancers",
]);
const INTEGER_RESOURCES = new Set([
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "services.nodeports",
  "services.loadbalancers",
]);
const isHugePages = (name: string) => name.startsWith("hugepages-");
const isNative = (name: string) => !name.includes("/") || name.includes("kubernetes.io/");
const isExtended = (name: string) => !isNative(name) && !name.startsWith("requests.") && isQualifiedName(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string) => isNative(name) && !isHugePages(name);

/** validateResourceName: a qualified name; unqualified ones must be standard. */
function validateResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = qualifiedName(name, path);
  if (errs.length > 0) return errs;
  const standard = STANDARD_RESOURCES.has(name) || isHugePages(name) || name.startsWith("requests.hugepages-");
  if (!name.includes("/") && !standard) return [fieldError.invalid(path, name, "must be a standard resource type or fully qualified")];
  return [];
}

/** validateContainerResourceName: cpu, memory, ephemeral-storage, hugepages-*, or an extended resource. */
function validateContainerResourceName(name: string, path: FieldPath): FieldError[] {
  const errs = validateResourceName(name, path);
  if (!name.includes("/")) {
    if (!["cpu", "memory", "ephemeral-storage"].includes(name) && !isHugePages(name)) {
      errs.push(fieldError.invalid(path, name, "must be a standard resource for containers"));
    }
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push(fieldError.invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** ValidateResourceQuantityValue: not negative; whole numbers for integer (and extended) resources. */
export function validateQuantityValue(name: string, q: Quantity, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (quantitySign(q) < 0) errs.push(fieldError.invalid(path, formatQuantity(q), "must be greater than or equal to 0"));
  if ((INTEGER_RESOURCES.has(name) || isExtended(name)) && quantityMilliValue(q) % 1000n !== 0n) {
    errs.push(fieldError.invalid(path, formatQuantity(q), "must be an integer"));
  }
  return errs;
}

/** A quantity, or undefined when it does not parse. */
export function tryQuantity(raw: string | number): Quantity | undefined {
  try {
    return parseQuantityJSON(raw);
  } catch {
    return undefined;
  }
}

/** IsHugePageResourceValueDivisible. */
function hugePagesDivisible(name: string, q: Quantity): boolean {
  const pageSize = tryQuantity(name.slice("hugepages-".length));
  if (!pageSize || quantitySign(pageSize) <= 0 || quantityMilliValue(pageSize) % 1000n !== 0n) return false;
  return quantityValue(q) % quantityValue(pageSize) === 0n;
}

const sortedEntries = (list: Record<string, string | number> | undefined) =>
  Object.entries(list ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** validateResourceRequirements for containers (and pod overhead): names, values, requests ≤ limits. */
export function validateResourceRequirements(
  req: Pick<ResourceRequirements, "limits" | "requests" | "claims">,
  podClaims: ReadonlySet<string>,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const limPath = path.child("limits");
  const reqPath = path.child("requests");
  const limits = new Map<string, Quantity>();
  let cpuOrMemory = false;
  let hugePages = false;
  const check = (name: string, raw: string | number, at: FieldPath): Quantity | undefined => {
    const q = tryQuantity(raw);
    errs.push(...validateContainerResourceName(name, at));
    // Decoding already refused a malformed quantity; this only guards objects that skipped it.
    if (!q) {
      errs.push(fieldError.invalid(at, raw, "must be a valid resource quantity"));
      return undefined;
    }
    errs.push(...validateQuantityValue(name, q, at));
    if (isHugePages(name)) {
      hugePages = true;
      if (!hugePagesDivisible(name, q))
        errs.push(fieldError.invalid(at, formatQuantity(q), `${formatQuantity(q)} is not positive integer multiple of ${name}`));
    }
    if (name === "cpu" || name === "memory") cpuOrMemory = true;
    return q;
  };
  for (const [name, raw] of sortedEntries(req.limits)) {
    const q = check(name, raw, limPath.key(name));
    if (q) limits.set(name, q);
  }
  for (const [name, raw] of sortedEntries(req.requests)) {
    const q = check(name, raw, reqPath.key(name));
    if (!q) continue;
    const limit = limits.get(name);
    if (limit) {
      const cmp = compareQuantities(q, limit);
      if (cmp !== 0 && !overcommitAllowed(name)) {
        errs.push(fieldError.invalid(reqPath, formatQuantity(q), `must be equal to ${name} limit of ${formatQuantity(limit)}`));
      } else if (cmp > 0) {
        errs.push(
          fieldError.invalid(reqPath, formatQuantity(q), `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`),
        );
      }
    } else if (!overcommitAllowed(name)) {
      errs.push(fieldError.required(limPath, "Limit must be set for non overcommitable resources"));
    }
  }
  if (hugePages && !cpuOrMemory) errs.push(fieldError.forbidden(path, "HugePages require cpu or memory"));
  errs.push(...validateResourceClaimNames(req.claims ?? [], podClaims, path.child("claims")));
  return errs;
}

function validateResourceClaimNames(
  claims: readonly { name: string; request?: string }[],
  podClaims: ReadonlySet<string>,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  claims.forEach((claim, i) => {
    const at = path.index(i);
    if (!claim.name) {
      errs.push(fieldError.required(at));
      return;
    }
    if (names.has(claim.name)) errs.push(fieldError.duplicate(at, claim.name));
    else {
      let key = claim.name;
      if (claim.request) {
        errs.push(...dnsLabel(claim.request, at.child("request")));
        key += `/${claim.request}`;
      }
      if (names.has(key)) errs.push(fieldError.duplicate(at, key));
      else if (!claim.request) {
        for (const k of names)
          if (k.includes("/") && k.slice(0, k.indexOf("/")) === claim.name) errs.push(fieldError.duplicate(at, claim.name));
      }
      names.add(key);
    }
    if (!podClaims.has(claim.name)) {
      const known = [...podClaims].sort();
      const detail = `must be one of the names in pod.spec.resourceClaims${known.length === 0 ? " which is empty" : `: ${known.join(", ")}`}`;
      errs.push({ ...fieldError.notFound(at, claim.name), detail });
    }
  });
  return errs;
}
