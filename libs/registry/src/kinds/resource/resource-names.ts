// Name rules of the resource.k8s.io kinds that come from Kubernetes' core helpers: DRA driver names
// (corevalidation.ValidateCSIDriverName) and extended resource names (v1helper.IsExtendedResourceName).
import { type FieldError, type FieldPath, fieldError, isDNS1123Subdomain, isQualifiedName } from "@orch/machinery";

const DRIVER_NAME_MAX_LENGTH = 63;

/**
 * A DRA driver name: required, at most 63 bytes, a DNS subdomain. Kubernetes lower-cases the name
 * before the DNS check (so `GPU.example.com` passes there); spec 2.7 says "lowercase only", so orch
 * checks the name as given, with Kubernetes' DNS-subdomain message.
 */
export function validateDriverName(name: string, at: FieldPath): FieldError[] {
  if (name === "") return [fieldError.required(at)];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(name) > DRIVER_NAME_MAX_LENGTH) errs.push(fieldError.tooLong(at, name, DRIVER_NAME_MAX_LENGTH));
  for (const msg of isDNS1123Subdomain(name)) errs.push(fieldError.invalid(at, name, msg));
  return errs;
}

/**
 * IsExtendedResourceName: a domain-prefixed name outside `kubernetes.io/`, not starting `requests.`,
 * such that `requests.<name>` is a qualified name (it becomes a quota resource name).
 */
export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes("/") || name.includes("kubernetes.io/");
  if (native || name.startsWith("requests.")) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}
