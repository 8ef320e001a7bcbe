// Node (core/v1, cluster-scoped): a machine pods are bound to. Kubernetes' node strategy
// (pkg/registry/core/node/strategy.go) and ValidateNode/ValidateNodeUpdate
// (pkg/apis/core/validation/validation.go). A node agent creates its Node with a status, so create
// keeps status (unlike most kinds); the main endpoint keeps it on update and /status keeps the spec.
import { type NamingProfile, type Node, Node as NodeSchema, defaultNode } from "@orch/api";
import { type FieldError, FieldPath, fieldError, isValidLabelValue, nameIsDNSSubdomain, validateLabelName } from "@orch/machinery";
import { isIP } from "node:net";
import type { KindDefinition, PrinterColumn, Strategy } from "../../generic/kind.js";
import { AGE, column, defineKind, statusSubresource } from "../../generic/define.js";
import { tryQuantity, validateQuantityValue } from "./resource-validation.js";

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const CIDR_MESSAGE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const IMMUTABLE_ONCE_SET = 'node updates may not change podCIDR except from "" to valid';

/** The IP family (4 or 6) of a CIDR as Go's net.ParseCIDR reads it, 0 when it does not parse. */
export function cidrFamily(cidr: string): 0 | 4 | 6 {
  const slash = cidr.indexOf("/");
  if (slash < 0) return 0;
  const family = isIP(cidr.slice(0, slash)) as 0 | 4 | 6;
  const prefix = cidr.slice(slash + 1);
  if (family === 0 || !/^[0-9]{1,3}$/.test(prefix)) return 0;
  return Number(prefix) <= (family === 4 ? 32 : 128) ? family : 0;
}

/** validateNodeTaints: key a label name, value a label value, a known effect, unique by key and effect. */
function validateTaints(node: Node, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (node.spec.taints ?? []).forEach((taint, i) => {
    const at = path.index(i);
    errs.push(...validateLabelName(taint.key, at.child("key")));
    const msgs = isValidLabelValue(taint.value ?? "");
    if (msgs.length > 0) errs.push(fieldError.invalid(at.child("value"), taint.value ?? "", msgs.join(";")));
    if (!taint.effect) errs.push(fieldError.required(at.child("effect")));
    else if (!TAINT_EFFECTS.includes(taint.effect)) errs.push(fieldError.notSupported(at.child("effect"), taint.effect, TAINT_EFFECTS));
    const id = `${taint.effect}\u0000${taint.key}`;
    if (seen.has(id)) {
      errs.push({ ...fieldError.duplicate(at, taint), detail: "taints must be unique by key and effect pair" });
      return;
    }
    seen.add(id);
  });
  return errs;
}

/** ValidateNodeResources: capacity and allocatable quantities are not negative (whole for counts). */
function validateResources(node: Node): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ["capacity", "allocatable"] as const) {
    for (const [name, raw] of Object.entries(node.status[field] ?? {})) {
      const q = tryQuantity(raw);
      const at = FieldPath.root("status", field, name);
      if (q) errs.push(...validateQuantityValue(name, q, at));
    }
  }
  return errs;
}

/** Each pod CIDR valid; two at most, and then one per IP family (dual stack). */
function validatePodCIDRs(node: Node): FieldError[] {
  const cidrs = node.spec.podCIDRs ?? [];
  const path = FieldPath.root("spec", "podCIDRs");
  const errs: FieldError[] = [];
  cidrs.forEach((cidr, i) => {
    if (cidrFamily(cidr) === 0) errs.push(fieldError.invalid(path.index(i), cidr, CIDR_MESSAGE));
  });
  if (cidrs.length > 1) {
    const families = new Set(cidrs.map(cidrFamily));
    if (cidrs.length > 2 || families.size !== 2 || families.has(0)) {
      errs.push(fieldError.invalid(path, cidrs, "may specify no more than one CIDR for each IP family"));
    }
  }
  return errs;
}

/**
 * ValidateNode. Kubernetes reports taints under `metadata.taints` (the path is built from the
 * metadata path), and so does orch, for clients that match on the field.
 */
function validateNode(node: Node): FieldError[] {
  return [...validateTaints(node, FieldPath.root("metadata", "taints")), ...validateResources(node), ...validatePodCIDRs(node)];
}

/** ValidateNodeUpdate: pod CIDRs and provider ID are set once; addresses are unique; externalID never changes. */
function validateNodeUpdate(node: Node, old: Node): FieldError[] {
  const errs = [...validateResources(node)];
  const seen = new Set<string>();
  (node.status.addresses ?? []).forEach((address, i) => {
    const id = `${address.type}\u0000${address.address}`;
    if (seen.has(id)) errs.push(fieldError.duplicate(FieldPath.root("status", "addresses").index(i), address));
    seen.add(id);
  });
  const oldCIDRs = old.spec.podCIDRs ?? [];
  const cidrs = node.spec.podCIDRs ?? [];
  if (oldCIDRs.length > 0) {
    const path = FieldPath.root("spec", "podCIDRs");
    if (oldCIDRs.length !== cidrs.length) errs.push(fieldError.forbidden(path, IMMUTABLE_ONCE_SET));
    else oldCIDRs.forEach((cidr, i) => cidr !== cidrs[i] && errs.push(fieldError.forbidden(path, IMMUTABLE_ONCE_SET)));
  }
  if (old.spec.providerID && old.spec.providerID !== node.spec.providerID) {
    errs.push(fieldError.forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'));
  }
  errs.push(...validateTaints(node, FieldPath.root("metadata", "taints")));
  if ((node.spec.externalID ?? "") !== (old.spec.externalID ?? ""))
    errs.push(fieldError.forbidden("spec.externalID", "may not be updated"));
  return errs;
}

const main: Strategy<Node> = {
  defaults: defaultNode,
  validateName: nameIsDNSSubdomain,
  validate: validateNode,
  // nodeStrategy.ValidateUpdate: the object's own rules, then the update's.
  validateUpdate: (obj, old) => [...validateNode(obj), ...validateNodeUpdate(obj, old)],
};

// statusSubresource's main strategy would drop status on create; a node agent registers its Node
// with one, so only its update rule (status kept on the main endpoint) and /status are taken.
const withStatus = statusSubresource(main);
const strategy: Strategy<Node> = { ...main, prepareForUpdate: withStatus.strategy.prepareForUpdate };
const status = { ...withStatus.status, validateUpdate: validateNodeUpdate };

type Cond = { type?: string; status?: string };
type Address = { type?: string; address?: string };
const nodeOf = (o: unknown) => o as Node;

/** printNode's STATUS: Ready / NotReady (Unknown without the condition), then SchedulingDisabled. */
export function nodeStatusText(node: Node): string {
  const ready = ((node.status?.conditions ?? []) as Cond[]).find((c) => c.type === "Ready");
  const parts = [ready ? (ready.status === "True" ? "Ready" : "NotReady") : "Unknown"];
  if (node.spec?.unschedulable) parts.push("SchedulingDisabled");
  return parts.join(",");
}

/** findNodeRoles: `node-role.<domain>/<role>` label keys and the `<domain>/role` label's value. */
function nodeRoles(node: Node, domain: string): string {
  const roles = new Set<string>();
  const prefix = `node-role.${domain}/`;
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(prefix) && key.length > prefix.length) roles.add(key.slice(prefix.length));
    else if (key === `${domain}/role` && value) roles.add(value);
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",");
}

const addressOf = (node: Node, type: string) =>
  ((node.status?.addresses ?? []) as Address[]).find((a) => a.type === type)?.address ?? "<none>";
const orUnknown = (s: string | undefined) => s || "<unknown>";

function nodeColumns(p: NamingProfile): PrinterColumn[] {
  return [
    column("Status", "string", (o) => nodeStatusText(nodeOf(o))),
    column("Roles", "string", (o) => nodeRoles(nodeOf(o), p.wellKnownDomain)),
    AGE,
    column("Version", "string", (o) => nodeOf(o).status?.nodeInfo?.kubeletVersion ?? ""),
    column("Internal-IP", "string", (o) => addressOf(nodeOf(o), "InternalIP"), 1),
    column("External-IP", "string", (o) => addressOf(nodeOf(o), "ExternalIP"), 1),
    column("OS-Image", "string", (o) => orUnknown(nodeOf(o).status?.nodeInfo?.osImage), 1),
    column("Kernel-Version", "string", (o) => orUnknown(nodeOf(o).status?.nodeInfo?.kernelVersion), 1),
    column("Container-Runtime", "string", (o) => orUnknown(nodeOf(o).status?.nodeInfo?.containerRuntimeVersion), 1),
  ];
}

export const nodes = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    shortNames: ["no"],
    namespaced: false,
    schema: NodeSchema,
    strategy,
    subresources: { status },
    selectableFields: { "spec.unschedulable": (o) => String(o.spec.unschedulable ?? false) },
    printerColumns: nodeColumns(p),
  });
