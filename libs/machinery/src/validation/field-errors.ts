import { goBadValue } from "../values/go-format.js";

// Field errors as Kubernetes reports them (k8s.io/apimachinery/pkg/util/validation/field):
// a path, a type, the bad value and a detail. They become `causes` of an Invalid Status.

export type FieldErrorType =
  | "FieldValueNotFound"
  | "FieldValueRequired"
  | "FieldValueDuplicate"
  | "FieldValueInvalid"
  | "FieldValueNotSupported"
  | "FieldValueForbidden"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueTypeInvalid"
  | "InternalError";

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueTypeInvalid: "Invalid value",
  InternalError: "Internal error",
};

/** Marks a field error that prints no value (Kubernetes' `omitValue`). */
export const omitValue = Symbol("omitValue");

export interface FieldError {
  type: FieldErrorType;
  field: string;
  value: unknown;
  detail: string;
}

/** A field path such as `spec.template.spec.containers[0].name`, built immutably. */
export class FieldPath {
  private constructor(private readonly text: string) {}
  static root(...names: string[]): FieldPath {
    return names.reduce((p, n) => p.child(n), new FieldPath(""));
  }
  child(name: string, ...more: string[]): FieldPath {
    let text = this.text === "" ? name : `${this.text}.${name}`;
    for (const m of more) text = `${text}.${m}`;
    return new FieldPath(text);
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.text}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.text}[${k}]`);
  }
  toString(): string {
    return this.text;
  }
}

type At = FieldPath | string;
const make = (type: FieldErrorType, at: At, value: unknown, detail = ""): FieldError => ({
  type,
  field: String(at),
  value,
  detail,
});

export const fieldError = {
  required: (at: At, detail = "") => make("FieldValueRequired", at, omitValue, detail),
  invalid: (at: At, value: unknown, detail: string) => make("FieldValueInvalid", at, value, detail),
  forbidden: (at: At, detail: string) => make("FieldValueForbidden", at, omitValue, detail),
  duplicate: (at: At, value: unknown) => make("FieldValueDuplicate", at, value),
  notFound: (at: At, value: unknown) => make("FieldValueNotFound", at, value),
  tooLong: (at: At, value: unknown, max: number) => make("FieldValueTooLong", at, value, `may not be more than ${max} bytes`),
  tooMany: (at: At, actual: number, max: number) => make("FieldValueTooMany", at, actual, `must have at most ${max} items`),
  notSupported: (at: At, value: unknown, supported: readonly string[]) =>
    make(
      "FieldValueNotSupported",
      at,
      value,
      supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}` : "",
    ),
  typeInvalid: (at: At, value: unknown, detail: string) => make("FieldValueTypeInvalid", at, value, detail),
  internal: (at: At, detail: string) => make("InternalError", at, omitValue, detail),
};

/** As Go prints a bad value: `%q` for strings, `%v` for scalars, JSON (HTML-escaped) otherwise. */
const formatValue = (value: unknown): string => goBadValue(value);

/** The error text without the field, as Kubernetes puts it in `causes[].message`. */
export function fieldErrorBody(e: FieldError): string {
  const printsValue =
    e.value !== omitValue && !["FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"].includes(e.type);
  let s = typeText[e.type];
  if (printsValue) s += `: ${formatValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function fieldErrorText(e: FieldError): string {
  return e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e);
}
