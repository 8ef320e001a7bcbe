// Ownership bookkeeping (structured-merge-diff merge/update.go): an Update gives the writer what it
// changed and takes it from everyone else; an Apply merges a configuration, refuses to change what
// others own unless forced, and removes what the applier stopped applying and nobody else owns.
import type { Shape } from "@orch/machinery";
import type { Path } from "./path.js";
import { FieldSet } from "./set.js";
import { type Comparison, compare, fieldsOf, jsonEqual, merge, removeItems } from "./typed.js";

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  /** Owned by an Apply (true) or an Update. */
  applied: boolean;
}

/** Field sets by manager identifier (see `managerIdentifier`). */
export type ManagedSets = Map<string, VersionedSet>;

/** One field another manager owns with another value. */
export interface Conflict {
  manager: string;
  path: Path;
}

export class Conflicts extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflicts`);
  }
}

/**
 * Paths the write's strategy resets (status on the main endpoint, everything else on /status): the
 * write neither owns nor conflicts on them (Kubernetes' reset fields, its IgnoreFilter).
 */
export type IgnoreFilter = (set: FieldSet) => FieldSet;

const filterComparison = (c: Comparison, ignore: IgnoreFilter | undefined): Comparison =>
  ignore ? { added: ignore(c.added), modified: ignore(c.modified), removed: ignore(c.removed) } : c;

/** Updater.update: others lose what changed (a conflict unless forced) and what was removed. */
function reassign(
  before: unknown,
  after: unknown,
  shape: Shape,
  managers: ManagedSets,
  workflow: string,
  force: boolean,
  ignore: IgnoreFilter | undefined,
): Comparison {
  const comparison = filterComparison(compare(before, after, shape), ignore);
  const changed = comparison.modified.union(comparison.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, owned] of managers) {
    if (manager === workflow) continue;
    const conflicting = owned.set.intersection(changed);
    if (!conflicting.empty()) conflicts.set(manager, conflicting);
  }
  if (!force && conflicts.size > 0) {
    const list: Conflict[] = [];
    for (const [manager, set] of [...conflicts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      for (const path of set.paths()) list.push({ manager, path });
    }
    throw new Conflicts(list);
  }
  for (const [manager, owned] of managers) {
    if (manager === workflow) continue;
    const lost = conflicts.get(manager);
    let set = lost ? owned.set.difference(lost) : owned.set;
    if (!comparison.removed.empty()) set = set.difference(comparison.removed);
    if (set.empty()) managers.delete(manager);
    else managers.set(manager, { ...owned, set });
  }
  return comparison;
}

/** Updater.Update: `manager` made `live` into `next`. */
export function update(
  live: unknown,
  next: unknown,
  shape: Shape,
  apiVersion: string,
  managers: ManagedSets,
  manager: string,
  ignore?: IgnoreFilter,
): void {
  const comparison = reassign(live, next, shape, managers, manager, true, ignore);
  const previous = managers.get(manager)?.set ?? new FieldSet();
  let set = previous.difference(comparison.removed).union(comparison.modified).union(comparison.added);
  if (ignore) set = ignore(set);
  if (set.empty()) managers.delete(manager);
  else managers.set(manager, { set, apiVersion, applied: false });
}

/**
 * Updater.Apply: merges `config` into `live` for `manager`; answers the new object, or undefined when
 * nothing changed. Throws `Conflicts` when others own changed fields and `force` is false.
 */
export function apply(
  live: unknown,
  config: unknown,
  shape: Shape,
  apiVersion: string,
  managers: ManagedSets,
  manager: string,
  force: boolean,
  ignore?: IgnoreFilter,
): unknown {
  let next: unknown = merge(live, config, shape) ?? {};
  const last = managers.get(manager);
  let set = fieldsOf(config, shape);
  if (ignore) set = ignore(set);
  managers.set(manager, { set, apiVersion, applied: true });
  if (last && !last.set.empty()) next = prune(next, managers, last.set, shape);
  reassign(live, next, shape, managers, manager, force, ignore);
  return jsonEqual(live, next) ? undefined : next;
}

/**
 * Removes what the applier owned last time, no longer applies, and nobody else owns (prune,
 * addBackOwnedItems, addBackDanglingItems): struct fields count as owned when something below them is.
 */
function prune(merged: unknown, managers: ManagedSets, lastSet: FieldSet, shape: Shape): unknown {
  let owned = new FieldSet();
  for (const { set } of managers.values()) owned = owned.union(set);
  const stale = lastSet.withNamedFieldsAsMembers(shape).difference(owned.withNamedFieldsAsMembers(shape));
  return removeItems(merged, stale, shape) ?? ({} as unknown);
}
