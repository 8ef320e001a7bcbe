// The kinds a CustomResourceDefinition declares: one KindDefinition per served version, built from the
// CRD's accepted names and each version's structural schema, subresources, printer columns and
// selectable fields. They are served by the generic store like any built-in kind; what Kubernetes'
// apiextensions-apiserver does in customresource/strategy.go maps onto the strategy, its tableconvertor
// onto the printer columns.
import {
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  type NamingProfile,
  type ObjectHeader,
  ObjectMeta,
  opt,
  setCrdCondition,
  str,
} from "@orch/api";
import { type FieldError, failure, fieldError, humanDuration } from "@orch/machinery";
import { compileSchema, schemaHasDefaults } from "@orch/schema";
import * as v from "valibot";
import {
  type KindDefinition,
  type PrinterColumn,
  type ScaleMapping,
  type Strategy,
  type SubresourceStrategy,
  type VersionConverter,
  noneConverter,
} from "../../generic/kind.js";
import { readPath } from "../../generic/json-path.js";
import { AGE, ALL_VERBS, statusSubresource } from "../../generic/define.js";

/** What the generic decoder checks of every custom object; the structural schema does the rest. */
const CustomObject = v.looseObject({ apiVersion: opt(str()), kind: opt(str()), metadata: opt(ObjectMeta, {}) });

type Crd = CustomResourceDefinition;
/** The finalizer that holds a CRD until its instances are gone (`customresourcecleanup.apiextensions.<domain>`). */
const crdCleanupFinalizer = (profile: NamingProfile): string => `customresourcecleanup.${profile.group("apiextensions")}`;

/**
 * A CRD's deletion starts (apiextensions-apiserver registry/customresourcedefinition/etcd.go): the
 * clean-up finalizer holds it while the crd-controller deletes the instances.
 */
export function beginCrdDeletion(crd: Crd, profile: NamingProfile): void {
  const finalizer = crdCleanupFinalizer(profile);
  const meta = crd.metadata;
  if (!(meta.finalizers ?? []).includes(finalizer)) meta.finalizers = [...(meta.finalizers ?? []), finalizer];
  crd.status ??= {};
  setCrdCondition(crd, {
    type: "Terminating",
    status: "True",
    reason: "InstanceDeletionPending",
    message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
  });
}

export interface CustomResourceKindOptions {
  /** Terminating condition True: instances can no longer be created. */
  terminating: boolean;
  /**
   * The CRD's conversion between versions: `noneConverter` by default; the apiserver gives the
   * webhook's for `spec.conversion.strategy: Webhook` (the call is its business, not the registry's).
   */
  converter?: VersionConverter;
}

/** The names a CRD is served under: the accepted ones, with the defaults Kubernetes fills in. */
function servedNames(crd: Crd) {
  const names = crd.status?.acceptedNames?.kind ? crd.status.acceptedNames : crd.spec.names;
  return {
    kind: names.kind,
    plural: names.plural,
    listKind: names.listKind || `${names.kind}List`,
    singular: names.singular || names.kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
  };
}

/** One KindDefinition per served version; throws when a version's schema does not compile. */
export function customResourceKinds(crd: Crd, profile: NamingProfile, options: CustomResourceKindOptions): KindDefinition[] {
  const spec = crd.spec;
  const storage = spec.versions.find((version) => version.storage) ?? spec.versions[0];
  const storageApiVersion = `${spec.group}/${storage?.name ?? ""}`;
  return spec.versions.filter((version) => version.served).map((version) => versionKind(crd, version, profile, storageApiVersion, options));
}

function versionKind(
  crd: Crd,
  version: CustomResourceDefinitionVersion,
  profile: NamingProfile,
  storageApiVersion: string,
  options: CustomResourceKindOptions,
): KindDefinition {
  const spec = crd.spec;
  const names = servedNames(crd);
  const openAPIV3Schema = version.schema?.openAPIV3Schema;
  const structural = openAPIV3Schema ? compileSchema(openAPIV3Schema, { extensionPrefix: profile.extensionPrefix }) : undefined;
  const pruning = structural && !spec.preserveUnknownFields ? structural : undefined;
  const scale = version.subresources?.scale;
  const hasStatus = version.subresources?.status !== undefined;

  const validate = (obj: ObjectHeader, old?: ObjectHeader): FieldError[] => [
    ...(structural?.validate(obj, old) ?? []),
    ...(scale ? validateSpecReplicas(obj, scale.specReplicasPath) : []),
  ];
  const main: Strategy = {
    ...(structural ? { defaults: (obj: ObjectHeader) => structural.applyDefaults(obj) } : {}),
    prepareForCreate() {
      // As Kubernetes' handler: 405 while the CRD is being deleted (its instances are going away).
      if (options.terminating) {
        throw failure(405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating", {
          group: spec.group,
          kind: names.plural,
        });
      }
    },
    validate: (obj) => validate(obj),
    validateUpdate: (obj, old) => validate(obj, old),
    // Without /status the whole object is the user's: any change but metadata is a new generation.
    ...(hasStatus ? {} : { generationSource: ({ metadata: _m, ...rest }: ObjectHeader) => rest }),
  };
  let strategy = main;
  const subresources: Record<string, SubresourceStrategy> = {};
  if (hasStatus) {
    const split = statusSubresource(main);
    strategy = split.strategy;
    // /status answers for status only (Kubernetes' statusStrategy validates the status schema).
    subresources.status = {
      ...split.status,
      validateUpdate: (obj, old) =>
        (structural?.validate(obj, old) ?? []).filter(
          (e) => e.field === "status" || e.field.startsWith("status.") || e.field.startsWith("status["),
        ),
    };
  }
  const deprecationWarning = version.deprecated ? (version.deprecationWarning ?? defaultDeprecationWarning(crd, version.name)) : undefined;

  return {
    group: spec.group,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind,
    plural: names.plural,
    singular: names.singular,
    shortNames: names.shortNames,
    categories: names.categories,
    namespaced: spec.scope === "Namespaced",
    custom: true,
    genericMetaValidation: true,
    schema: CustomObject,
    ...(pruning ? { prune: (obj: Record<string, unknown>) => pruning.prune(obj) } : {}),
    // Only schemas with defaults pay for parsing on read.
    ...(structural && schemaHasDefaults(openAPIV3Schema) ? { defaultsOnRead: (obj: ObjectHeader) => structural.applyDefaults(obj) } : {}),
    ...(openAPIV3Schema ? { openAPIV3Schema: openAPIV3Schema as Record<string, unknown> } : {}),
    ...(structural ? { shape: structural.shape } : {}),
    storageApiVersion,
    converter: options.converter ?? noneConverter,
    strategy,
    subresources,
    ...(scale ? { scale: scaleMapping(scale) } : {}),
    selectableFields: Object.fromEntries(
      (version.selectableFields ?? []).map((f) => [f.jsonPath.replace(/^\./, ""), selectableValue(f.jsonPath)]),
    ),
    printerColumns: printerColumns(version),
    verbs: ALL_VERBS,
    ...(deprecationWarning ? { deprecationWarning } : {}),
  };
}

/** customResourceValidator.ValidateScaleSpec: the replicas a Scale maps to must be a non-negative int32. */
function validateSpecReplicas(obj: ObjectHeader, path: string): FieldError[] {
  const replicas = readPath(obj, path);
  if (replicas === undefined) return [];
  if (typeof replicas !== "number" || !Number.isInteger(replicas)) {
    return [
      fieldError.invalid(
        path,
        replicas,
        `${path} accessor error: ${JSON.stringify(replicas)} is of the type ${typeof replicas}, expected int64`,
      ),
    ];
  }
  if (replicas < 0) return [fieldError.invalid(path, replicas, "should be a non-negative integer")];
  if (replicas > 2147483647) return [fieldError.invalid(path, replicas, "should be less than or equal to 2147483647")];
  return [];
}

function scaleMapping(scale: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string }): ScaleMapping {
  const selectorPath = scale.labelSelectorPath;
  return {
    specReplicasPath: scale.specReplicasPath,
    statusReplicasPath: scale.statusReplicasPath,
    ...(selectorPath
      ? {
          selector: (obj: ObjectHeader) => {
            const value = readPath(obj, selectorPath);
            return typeof value === "string" ? value : undefined;
          },
        }
      : {}),
  };
}

/** A selectable field's value as field selectors compare it; an absent field is the empty string. */
function selectableValue(path: string): (obj: ObjectHeader) => string {
  return (obj) => {
    const value = readPath(obj, path);
    return value === undefined || value === null || typeof value === "object" ? "" : String(value);
  };
}

/** `<group>/<version> <Kind> is deprecated; use <group>/<newest other served version> <Kind>` (as Kubernetes). */
function defaultDeprecationWarning(crd: Crd, deprecated: string): string {
  const { group, names } = crd.spec;
  const message = `${group}/${deprecated} ${names.kind} is deprecated`;
  const newer = crd.spec.versions
    .filter((v) => v.served && !v.deprecated && compareKubeAwareVersions(deprecated, v.name) < 0)
    .map((v) => v.name)
    .sort((a, b) => compareKubeAwareVersions(b, a));
  return newer[0] ? `${message}; use ${group}/${newer[0]} ${names.kind}` : message;
}

/** version.CompareKubeAwareVersionStrings: GA > beta > alpha, then by numbers; other names sort below. */
function compareKubeAwareVersions(a: string, b: string): number {
  const rank = (s: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(s);
    if (!m) return undefined;
    return [Number(m[1]), m[2] === "alpha" ? 0 : m[2] === "beta" ? 1 : 2, Number(m[3] ?? 0)] as const;
  };
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) {
    if (ra) return 1;
    if (rb) return -1;
    return a < b ? 1 : a > b ? -1 : 0;
  }
  if (ra[1] !== rb[1]) return ra[1] - rb[1];
  if (ra[0] !== rb[0]) return ra[0] - rb[0];
  return ra[2] - rb[2];
}

// ---- printer columns (apiextensions-apiserver registry/customresource/tableconvertor) ----------------

const COLUMN_TYPES = new Set(["string", "integer", "number", "boolean", "date"]);

/** A version's columns; without any, Kubernetes prints the age alone. Cells come out ready to send. */
function printerColumns(version: CustomResourceDefinitionVersion): PrinterColumn[] {
  const declared = version.additionalPrinterColumns ?? [];
  const columns = declared.length
    ? declared
    : [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: AGE.description }];
  return columns.map((c) => {
    const type = (COLUMN_TYPES.has(c.type) ? c.type : "string") as PrinterColumn["type"];
    const path = parseJsonPath(c.jsonPath);
    return {
      name: c.name,
      type,
      value: (obj) => {
        const found = path ? evaluateJsonPath(path, obj) : [];
        return found.length === 0 ? undefined : cellFor(type, found[0]);
      },
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      ...(c.format !== undefined ? { format: c.format } : {}),
      priority: c.priority ?? 0,
    };
  });
}

/** tableconvertor's cellForJSONValue, and jsonpath printing for string columns. */
function cellFor(type: PrinterColumn["type"], value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  switch (type) {
    case "string":
      return typeof value === "object" ? JSON.stringify(value) : String(value);
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : undefined;
    case "number":
      return typeof value === "number" ? value : undefined;
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "date": {
      if (typeof value !== "string") return undefined;
      const at = Date.parse(value);
      return Number.isNaN(at) ? "<invalid>" : humanDuration(Date.now() - at);
    }
  }
}

type Step =
  | { kind: "field"; name: string }
  | { kind: "index"; index: number }
  | { kind: "all" }
  | { kind: "descend"; name: string }
  | { kind: "filter"; path: Step[]; op?: string; literal?: unknown };

/**
 * The JSONPath subset printer columns use (client-go jsonpath inside `{}`): `.a.b`, `['a.b']`, `[0]`,
 * `[-1]`, `[*]`, `..name` and filters such as `[?(@.type=="Ready")]`. Undefined for a path it cannot read.
 */
function parseJsonPath(text: string): Step[] | undefined {
  const steps: Step[] = [];
  let i = 0;
  const s = text
    .trim()
    .replace(/^\{(.*)\}$/, "$1")
    .replace(/^\$/, "");
  const name = () => {
    const m = /^[^.[\]\s]+/.exec(s.slice(i));
    if (!m) return undefined;
    i += m[0].length;
    return m[0];
  };
  if (s && s[0] !== "." && s[0] !== "[") {
    const first = name();
    if (!first) return undefined;
    steps.push({ kind: "field", name: first });
  }
  while (i < s.length) {
    if (s.startsWith("..", i)) {
      i += 2;
      const n = name();
      if (!n) return undefined;
      steps.push({ kind: "descend", name: n });
    } else if (s[i] === ".") {
      i++;
      if (s[i] === "*") {
        i++;
        steps.push({ kind: "all" });
        continue;
      }
      const n = name();
      if (!n) return undefined;
      steps.push({ kind: "field", name: n });
    } else if (s[i] === "[") {
      const close = matchingBracket(s, i);
      if (close < 0) return undefined;
      const inner = s.slice(i + 1, close).trim();
      i = close + 1;
      const step = bracketStep(inner);
      if (!step) return undefined;
      steps.push(step);
    } else {
      return undefined;
    }
  }
  return steps;
}

function matchingBracket(s: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = open; j < s.length; j++) {
    const c = s[j];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) return j;
  }
  return -1;
}

function bracketStep(inner: string): Step | undefined {
  if (inner === "*") return { kind: "all" };
  if (/^-?\d+$/.test(inner)) return { kind: "index", index: Number(inner) };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { kind: "field", name: quoted[2]! };
  const filter = /^\?\((.*)\)$/.exec(inner);
  if (!filter) return undefined;
  const m = /^@((?:\.[^\s=!<>]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/.exec(filter[1]!.trim());
  if (!m) return undefined;
  const path = m[1] ? parseJsonPath(m[1]) : [];
  if (!path) return undefined;
  if (!m[2]) return { kind: "filter", path };
  const raw = m[3]!.trim();
  const str = /^(['"])(.*)\1$/.exec(raw);
  const literal = str ? str[2] : raw === "true" ? true : raw === "false" ? false : Number(raw);
  if (typeof literal === "number" && Number.isNaN(literal)) return undefined;
  return { kind: "filter", path, op: m[2], literal };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    default: {
      if (typeof a !== "number" || typeof b !== "number") return false;
      return op === "<" ? a < b : op === ">" ? a > b : op === "<=" ? a <= b : a >= b;
    }
  }
}

/** The values a path selects, in document order (missing keys select nothing). */
function evaluateJsonPath(steps: readonly Step[], root: unknown): unknown[] {
  let nodes: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const node of nodes) {
      switch (step.kind) {
        case "field":
          if (isObject(node) && step.name in node) next.push(node[step.name]);
          break;
        case "index":
          if (Array.isArray(node)) {
            const at = step.index < 0 ? node.length + step.index : step.index;
            if (at >= 0 && at < node.length) next.push(node[at]);
          }
          break;
        case "all":
          if (Array.isArray(node)) next.push(...node);
          else if (isObject(node)) next.push(...Object.values(node));
          break;
        case "descend":
          collect(node, step.name, next);
          break;
        case "filter": {
          const items = Array.isArray(node) ? node : isObject(node) ? Object.values(node) : [];
          for (const item of items) {
            const found = evaluateJsonPath(step.path, item);
            if (step.op === undefined ? found.length > 0 : found.length > 0 && compare(found[0], step.op, step.literal)) next.push(item);
          }
          break;
        }
      }
    }
    nodes = next;
  }
  return nodes;
}

function collect(node: unknown, name: string, out: unknown[]): void {
  if (isObject(node)) {
    if (name in node) out.push(node[name]);
    for (const value of Object.values(node)) collect(value, name, out);
  } else if (Array.isArray(node)) {
    for (const value of node) collect(value, name, out);
  }
}
