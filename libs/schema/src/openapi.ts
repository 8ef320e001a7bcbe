// Schema validation of a custom resource as kube-openapi's SchemaValidator runs it
// (pkg/validation/validate: type, schema_props, string, format, number, slice, common, object
// validators, in that order, each when it applies to the value's kind), with its messages
// (pkg/validation/errors/schema.go), turned into field errors the way apiextensions-apiserver's
// kubeOpenAPIResultToFieldErrors does.
import { type FieldError, type FieldPath, fieldError, jsonEqual } from "@orch/machinery";
import { compileRegexp } from "@orch/cel";
import { validatesFormat } from "./formats.js";
import { type SchemaNode, isPlainObject } from "./structural.js";
import { goFloat } from "./values.js";

type Code =
  | "InvalidType"
  | "Required"
  | "TooLong"
  | "TooShort"
  | "Pattern"
  | "Enum"
  | "MultipleOf"
  | "Max"
  | "Min"
  | "Unique"
  | "MaxItems"
  | "MinItems"
  | "NoAdditionalItems"
  | "TooFewProperties"
  | "TooManyProperties"
  | "UnallowedProperty"
  | "MultipleOfMustBePositive";

/** An errors.Validation (a named value failed a check) or a plain error (composite messages). */
type OpenApiError =
  | { code: Code; name: string; value: unknown; valid?: number; values?: unknown[]; message: string }
  | { code: "Plain"; message: string };

interface Result {
  errors: OpenApiError[];
  /** Result.MatchCount: how many checks passed; anyOf/oneOf report the closest alternative. */
  matchCount: number;
}

const IN = "body";

const invalidType = (name: string, typeName: string, value: unknown): OpenApiError => ({
  code: "InvalidType",
  name,
  value,
  // errors.InvalidType prints string values with %q and others not at all.
  message:
    typeof value === "string"
      ? `${name} in ${IN} must be of type ${typeName}: ${JSON.stringify(value)}`
      : `${name} in ${IN} must be of type ${typeName}`,
});

const plain = (message: string): OpenApiError => ({ code: "Plain", message });

/** The JSON type and go-openapi format a decoded value has (typeValidator.schemaInfoForType). */
function schemaInfo(data: unknown): [string, string] {
  if (typeof data === "boolean") return ["boolean", ""];
  if (typeof data === "string") return ["string", ""];
  if (typeof data === "number") return Number.isInteger(data) ? ["integer", "int64"] : ["number", "float64"];
  if (typeof data === "bigint") return ["integer", "int64"];
  if (Array.isArray(data)) return ["array", ""];
  return ["object", ""];
}

const isIntegral = (data: unknown): boolean => typeof data === "bigint" || (typeof data === "number" && Number.isInteger(data));

/** The schema's types: `x-int-or-string` is integer or string. */
const typesOf = (s: SchemaNode): string[] => (s.intOrString ? ["integer", "string"] : s.type ? [s.type] : []);

function validateType(s: SchemaNode, path: string, data: unknown): OpenApiError[] {
  const types = typesOf(s);
  if (data === null) {
    return types.length > 0 && !types.includes("null") && !s.nullable ? [invalidType(path, types.join(","), "null")] : [];
  }
  const [schType, format] = schemaInfo(data);
  const isString = typeof data === "string";
  const isSlice = Array.isArray(data);
  const isFloatInt = schType === "number" && isIntegral(data) && types.includes("integer");
  const isIntFloat = schType === "integer" && types.includes("number");
  if (!isString && !isSlice && s.format !== "" && !(types.includes(schType) || format === s.format || isFloatInt || isIntFloat)) {
    return [invalidType(path, s.format, format)];
  }
  if (!(types.includes("number") || types.includes("integer")) && s.format !== "" && (isString || isSlice)) return [];
  if (!(types.includes(schType) || isFloatInt || isIntFloat)) return [invalidType(path, types.join(","), schType)];
  return [];
}

function validateString(s: SchemaNode, path: string, data: string): OpenApiError[] {
  const length = [...data].length;
  if (s.raw.maxLength !== undefined && length > s.raw.maxLength) {
    return [
      {
        code: "TooLong",
        name: path,
        value: data,
        valid: s.raw.maxLength,
        message: `${path} in ${IN} should be at most ${s.raw.maxLength} chars long`,
      },
    ];
  }
  if (s.raw.minLength !== undefined && length < s.raw.minLength) {
    return [{ code: "TooShort", name: path, value: data, message: `${path} in ${IN} should be at least ${s.raw.minLength} chars long` }];
  }
  if (s.raw.pattern) {
    const re = compilePattern(s.raw.pattern);
    if (typeof re === "string") {
      return [
        {
          code: "Pattern",
          name: path,
          value: data,
          message: `${path} in ${IN} should match '${s.raw.pattern}, but pattern is invalid: ${re}'`,
        },
      ];
    }
    if (!re.test(data)) return [{ code: "Pattern", name: path, value: data, message: `${path} in ${IN} should match '${s.raw.pattern}'` }];
  }
  return [];
}

/** A schema pattern, compiled as Go's regexp (RE2): what matches, or Go's parse error. */
export function compilePattern(pattern: string): { test(text: string): boolean } | string {
  const compiled = compileRegexp(pattern);
  return compiled.ok ? compiled.regexp : compiled.message;
}

/** swag.IsFloat64AJSONInteger. */
function isJSONInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53) return false;
  const g = Math.trunc(f);
  if (f === g) return true;
  const diff = Math.abs(f - g);
  if (g === 0) return diff < 1e-9 * Number.MIN_VALUE;
  return diff / (Math.abs(f) + Math.abs(g)) < 1e-9;
}

function validateNumber(s: SchemaNode, path: string, data: number): OpenApiError[] {
  const int = Number.isInteger(data);
  // numberValidator checks ranges only for a single declared type; CRD formats int32/int64 are stripped.
  const integerType = !s.intOrString && s.type === "integer";
  /** IsValueValidAgainstRange: under an integer schema, the value and each bound must be an int64. */
  const outOfRange = (v: number, prefix: string): OpenApiError | undefined =>
    integerType && (!Number.isInteger(v) || Math.abs(v) >= 2 ** 63)
      ? plain(`${prefix} value must be of type integer (default format) in ${path}`)
      : undefined;
  const errors: OpenApiError[] = [];
  const checked = outOfRange(data, "Checked");
  if (checked) errors.push(checked);
  /** Whether the comparison is made on int64s (the bound truncated), as the *NativeType helpers do. */
  const native = (bound: number, prefix: string): boolean => {
    const rangeError = outOfRange(bound, prefix);
    if (rangeError) errors.push(rangeError);
    return !rangeError && int;
  };
  const { multipleOf, maximum, minimum, exclusiveMaximum, exclusiveMinimum } = s.raw;
  if (multipleOf !== undefined) {
    const factor = native(multipleOf, "MultipleOf") ? Math.trunc(multipleOf) : multipleOf;
    if (factor <= 0) {
      errors.push({
        code: "MultipleOfMustBePositive",
        name: path,
        value: factor,
        message: `factor MultipleOf declared for ${path} must be positive: ${goFloat(factor)}`,
      });
    } else {
      const ok = Number.isInteger(factor) && int ? data % factor === 0 : isJSONInteger(factor < 1 ? (1 / factor) * data : data / factor);
      if (!ok)
        errors.push({
          code: "MultipleOf",
          name: path,
          value: data,
          message: `${path} in ${IN} should be a multiple of ${goFloat(factor)}`,
        });
    }
  }
  if (minimum !== undefined) {
    const min = native(minimum, "Minimum boundary") ? Math.trunc(minimum) : minimum;
    if (exclusiveMinimum ? data <= min : data < min) {
      const rel = exclusiveMinimum ? "greater than" : "greater than or equal to";
      errors.push({ code: "Min", name: path, value: data, message: `${path} in ${IN} should be ${rel} ${goFloat(min)}` });
    }
  }
  if (maximum !== undefined) {
    const max = native(maximum, "Maximum boundary") ? Math.trunc(maximum) : maximum;
    if (exclusiveMaximum ? data >= max : data > max) {
      const rel = exclusiveMaximum ? "less than" : "less than or equal to";
      errors.push({ code: "Max", name: path, value: data, message: `${path} in ${IN} should be ${rel} ${goFloat(max)}` });
    }
  }
  return errors;
}

function validateEnum(s: SchemaNode, path: string, data: unknown): OpenApiError[] {
  const values = s.raw.enum;
  if (!values?.length) return [];
  if (data !== null && values.some((v) => jsonEqual(v, data))) return [];
  return [{ code: "Enum", name: path, value: data, values, message: `${path} in ${IN} should be one of ${goSlice(values)}` }];
}

/** fmt's %v of a []interface{}. */
const goSlice = (values: readonly unknown[]): string => `[${values.map((v) => goValue(v)).join(" ")}]`;

function goValue(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (typeof v === "number") return goFloat(v);
  if (Array.isArray(v)) return goSlice(v);
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goValue(v[k])}`).join(" ")}]`;
  }
  return String(v);
}

class Validator {
  node(s: SchemaNode, path: string, data: unknown): Result {
    const result: Result = { errors: [], matchCount: 0 };
    const merge = (errors: OpenApiError[] | Result) => {
      if (Array.isArray(errors)) result.errors.push(...errors);
      else {
        result.errors.push(...errors.errors);
        result.matchCount += errors.matchCount;
      }
      result.matchCount++;
    };
    if (data === null || data === undefined) {
      result.errors.push(...validateType(s, path, null), ...validateEnum(s, path, null));
      return result;
    }
    if (typesOf(s).length > 0 || s.format !== "") merge(validateType(s, path, data));
    merge(this.schemaProps(s, path, data));
    if (typeof data === "string") {
      merge(validateString(s, path, data));
      if (s.format !== "" && !validatesFormat(s.format, data)) merge([invalidType(path, s.raw.format ?? s.format, data)]);
    }
    if (typeof data === "number") merge(validateNumber(s, path, data));
    if (Array.isArray(data)) merge(this.slice(s, path, data));
    merge(validateEnum(s, path, data));
    if (isPlainObject(data)) merge(this.object(s, path, data));
    result.matchCount++;
    return result;
  }

  schemaProps(s: SchemaNode, path: string, data: unknown): Result {
    const main: Result = { errors: [], matchCount: 0 };
    if (s.anyOf.length > 0) {
      let best: Result | undefined;
      let succeeded = false;
      for (const option of s.anyOf) {
        const r = this.node(option, path, data);
        if (r.errors.length === 0) {
          succeeded = true;
          best = undefined;
          break;
        }
        if (!best || r.matchCount > best.matchCount) best = r;
      }
      if (!succeeded) main.errors.push(plain(`${JSON.stringify(path)} must validate at least one schema (anyOf)`));
      if (best) main.errors.push(...best.errors);
    }
    if (s.oneOf.length > 0) {
      let best: Result | undefined;
      let validated = 0;
      for (const option of s.oneOf) {
        const r = this.node(option, path, data);
        if (r.errors.length === 0) {
          validated++;
          best = undefined;
          continue;
        }
        if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
      }
      if (validated !== 1) {
        const detail = validated === 0 ? "Found none valid" : `Found ${validated} valid alternatives`;
        main.errors.push(plain(`${JSON.stringify(path)} must validate one and only one schema (oneOf). ${detail}`));
        if (best) main.errors.push(...best.errors);
      }
    }
    if (s.allOf.length > 0) {
      let validated = 0;
      for (const option of s.allOf) {
        const r = this.node(option, path, data);
        if (r.errors.length === 0) validated++;
        main.errors.push(...r.errors);
      }
      if (validated !== s.allOf.length) {
        main.errors.push(
          plain(`${JSON.stringify(path)} must validate all the schemas (allOf)${validated === 0 ? ". None validated" : ""}`),
        );
      }
    }
    if (s.not && this.node(s.not, path, data).errors.length === 0) {
      main.errors.push(plain(`${JSON.stringify(path)} must not validate the schema (not)`));
    }
    main.matchCount++;
    return main;
  }

  slice(s: SchemaNode, path: string, data: unknown[]): Result {
    const result: Result = { errors: [], matchCount: 0 };
    const merge = (r: Result) => {
      result.errors.push(...r.errors);
      result.matchCount += r.matchCount;
    };
    if (s.items) data.forEach((item, i) => merge(this.node(s.items!, `${path}[${i}]`, item)));
    const tuple = s.itemList ?? [];
    tuple.forEach((schema, i) => {
      if (i < data.length) merge(this.node(schema, `${path}[${i}]`, data[i]));
    });
    if (s.additionalItems !== undefined && tuple.length < data.length) {
      if (tuple.length > 0 && s.additionalItems === false) result.errors.push(plain("array doesn't allow for additional items"));
      if (typeof s.additionalItems === "object") {
        for (let i = tuple.length; i < data.length; i++) merge(this.node(s.additionalItems, `${path}[${i}]`, data[i]));
      }
    }
    const size = data.length;
    if (s.raw.minItems !== undefined && size < s.raw.minItems) {
      result.errors.push({
        code: "MinItems",
        name: path,
        value: size,
        message: `${path} in ${IN} should have at least ${s.raw.minItems} items`,
      });
    }
    if (s.raw.maxItems !== undefined && size > s.raw.maxItems) {
      result.errors.push({
        code: "MaxItems",
        name: path,
        value: size,
        valid: s.raw.maxItems,
        message: `${path} in ${IN} should have at most ${s.raw.maxItems} items`,
      });
    }
    if (s.raw.uniqueItems && data.some((x, i) => data.slice(0, i).some((y) => jsonEqual(x, y)))) {
      result.errors.push({ code: "Unique", name: path, value: undefined, message: `${path} in ${IN} shouldn't contain duplicates` });
    }
    result.matchCount++;
    return result;
  }

  object(s: SchemaNode, path: string, data: Record<string, unknown>): Result {
    const result: Result = { errors: [], matchCount: 0 };
    const merge = (r: Result) => {
      result.errors.push(...r.errors);
      result.matchCount += r.matchCount;
    };
    const keys = Object.keys(data);
    const { minProperties, maxProperties } = s.raw;
    if (minProperties !== undefined && keys.length < minProperties) {
      result.errors.push({
        code: "TooFewProperties",
        name: path,
        value: keys.length,
        valid: minProperties,
        message: `${path} in ${IN} should have at least ${minProperties} properties`,
      });
    }
    if (maxProperties !== undefined && keys.length > maxProperties) {
      result.errors.push({
        code: "TooManyProperties",
        name: path,
        value: keys.length,
        valid: maxProperties,
        message: `${path} in ${IN} should have at most ${maxProperties} properties`,
      });
    }
    const matchingPatterns = (key: string) =>
      [...s.patternProperties].filter(([pattern]) => {
        const re = compilePattern(pattern);
        return typeof re !== "string" && re.test(key);
      });
    if (s.additionalProperties === false) {
      for (const key of keys) {
        if (!s.properties.has(key) && matchingPatterns(key).length === 0) {
          result.errors.push({
            code: "UnallowedProperty",
            name: path,
            value: key,
            message: `${path}.${key} in ${IN} is a forbidden property`,
          });
        }
      }
    } else if (typeof s.additionalProperties === "object") {
      for (const key of keys) {
        if (!s.properties.has(key) && matchingPatterns(key).length === 0)
          merge(this.node(s.additionalProperties, `${path}.${key}`, data[key]));
      }
    }
    for (const [name, prop] of s.properties) {
      if (Object.hasOwn(data, name)) merge(this.node(prop, path === "" ? name : `${path}.${name}`, data[name]));
    }
    for (const name of s.raw.required ?? []) {
      if (!Object.hasOwn(data, name)) {
        result.errors.push({
          code: "Required",
          name: `${path}.${name}`,
          value: undefined,
          message: `${path}.${name} in ${IN} is required`,
        });
      }
    }
    for (const key of keys) {
      if (s.properties.has(key)) continue;
      for (const [, schema] of matchingPatterns(key)) merge(this.node(schema, `${path}.${key}`, data[key]));
    }
    return result;
  }
}

const supportedValue = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** kubeOpenAPIResultToFieldErrors. */
function toFieldError(e: OpenApiError): FieldError {
  if (e.code === "Plain") return fieldError.invalid("", "", e.message);
  const at = e.name.replace(/^\./, "");
  const value = e.value ?? "";
  switch (e.code) {
    case "Required":
      return fieldError.required(at);
    case "Enum":
      // field.Error prints a nil value as "null".
      return fieldError.notSupported(at, e.value ?? "null", (e.values ?? []).map(supportedValue));
    case "TooLong":
      return {
        type: "FieldValueTooLong",
        field: at,
        value,
        detail: `may not be more than ${e.valid} ${e.valid === 1 ? "byte" : "bytes"}`,
      };
    case "MaxItems":
    case "TooManyProperties":
      return fieldError.tooMany(at, Number(e.value), e.valid ?? -1);
    case "InvalidType":
      return fieldError.typeInvalid(at, value, e.message);
    default:
      return fieldError.invalid(at, value, e.message);
  }
}

/** Validates `value` against the whole schema (root path empty) and reports Kubernetes' field errors. */
export function validateOpenAPI(schema: SchemaNode, value: unknown): FieldError[] {
  return new Validator().node(schema, "", value).errors.map(toFieldError);
}

/** The same for a value that sits at `at` (a schema's `default`): paths prefixed, messages unchanged. */
export function validateOpenAPIAt(schema: SchemaNode, value: unknown, at: FieldPath): FieldError[] {
  return validateOpenAPI(schema, value).map((e) => ({ ...e, field: e.field === "" ? at.toString() : at.child(e.field).toString() }));
}
