// Value formats the pod validation uses, with Kubernetes' texts (k8s.io/apimachinery/pkg/util/validation
// and small helpers of pkg/apis/core/validation).
import {
  type FieldError,
  type FieldPath,
  fieldError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  regexError,
  validateNonnegativeField,
} from "@orch/machinery";
import { isIP } from "node:net";

export const MAX_INT32 = 2147483647;

export const inclusiveRangeError = (lo: number, hi: number) => `must be between ${lo} and ${hi}, inclusive`;

export const isValidPortNum = (port: number): string[] => (port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)]);

export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(port)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(port)) errs.push("must contain at least one letter (a-z)");
  if (port.includes("--")) errs.push("must not contain consecutive hyphens");
  if (port.startsWith("-") || port.endsWith("-")) errs.push("must not begin or end with a hyphen");
  return errs;
}

/** IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is GA): printable ASCII but `=`. */
export function isRelaxedEnvVarName(name: string): string[] {
  const errs: string[] = [];
  if (name.length === 0) errs.push("environment variable name must be non-empty");
  for (const ch of name) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp > 0x7e || cp < 0x20 || ch === "=") {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

export function isConfigMapKey(key: string): string[] {
  const errs: string[] = [];
  if (key.length > 253) errs.push("must be no more than 253 characters");
  if (!/^[-._a-zA-Z0-9]+$/.test(key)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        "[-._a-zA-Z0-9]+",
        "key.name",
        "KEY_NAME",
        "key-name",
      ),
    );
  }
  if (key === ".") errs.push("must not be '.'");
  else if (key === "..") errs.push("must not be '..'");
  else if (key.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}

export const invalidEach = (path: FieldPath, value: unknown, msgs: string[]) => msgs.map((m) => fieldError.invalid(path, value, m));
export const dnsLabel = (value: string, path: FieldPath) => invalidEach(path, value, isDNS1123Label(value));
export const dnsSubdomain = (value: string, path: FieldPath) => invalidEach(path, value, isDNS1123Subdomain(value));
export const qualifiedName = (value: string, path: FieldPath) => invalidEach(path, value, isQualifiedName(value));
export const nonNegative = (value: number | undefined, path: FieldPath) => validateNonnegativeField(value ?? 0, path);

/** A closed set of values: Required when empty, NotSupported otherwise. */
export function oneOf(value: string | undefined, allowed: readonly string[], path: FieldPath): FieldError[] {
  if (!value) return [fieldError.required(path)];
  return allowed.includes(value) ? [] : [fieldError.notSupported(path, value, allowed)];
}

const IP_MESSAGE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
export const validIP = (value: string, path: FieldPath) => (isIP(value) ? [] : [fieldError.invalid(path, value, IP_MESSAGE)]);

/** validateSeccompProfileField: the type is one of three. */
export function validateSeccompProfile(profile: { type: string; localhostProfile?: string } | undefined, path: FieldPath): FieldError[] {
  if (!profile) return [];
  const at = path.child("type");
  if (!profile.type) return [fieldError.required(at, "type is required when seccompProfile is set")];
  const types = ["Localhost", "RuntimeDefault", "Unconfined"];
  return types.includes(profile.type) ? [] : [fieldError.notSupported(at, profile.type, types)];
}
