// A set of field paths (structured-merge-diff fieldpath.Set): at each level, the elements that are
// members and the children with their own sets, never an empty one. fieldsV1 is its JSON form.
// A set is built (insert(), read(), or a walk's child() and addMember()) and never changed afterwards,
// so the set operations share the subtrees they leave alone instead of copying them.
import { type Path, type PathElement, type PathElementError, compareElements, deserializeElement, serializeElement } from "./path.js";
import { type Shape, memberShape, untypedShape } from "@orch/machinery";

interface Child {
  pe: PathElement;
  set: FieldSet;
}

/** One element of a level: `id` its serialized form; `child` the paths below it, when there are any. */
interface Entry {
  id: string;
  pe: PathElement;
  child?: FieldSet;
}

const byElement = (a: Entry, b: Entry) => compareElements(a.pe, b.pe);

/** fieldsV1 as JSON: `{"f:spec": {"f:replicas": {}}}`; `"."` marks a member that also has children. */
export type FieldsV1 = { [key: string]: FieldsV1 };

export class FieldsV1Error extends Error {}

export class FieldSet {
  /** Keyed by the element's serialized form, which identifies it. */
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, Child>();
  /** The stored fieldsV1 this set was read from, when that is its own encoding (see `fromFieldsV1`). */
  private encoding: FieldsV1 | undefined;

  static of(...paths: Path[]): FieldSet {
    const set = new FieldSet();
    for (const p of paths) set.insert(p);
    return set;
  }

  /** Adds a path; the empty path (the whole object) is not tracked, as in Kubernetes. */
  insert(path: Path): void {
    if (path.length === 0) return;
    const last = path[path.length - 1]!;
    this.levelOf(path).addMember(last, serializeElement(last));
  }

  /** While a set is being built: the level that holds `path`'s last element, made when missing. */
  levelOf(path: Path): FieldSet {
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.child(path[i]!, serializeElement(path[i]!));
    return node;
  }

  /**
   * While a set is being built: `pe` (serialized, `id`) a member of this level. With `child`, a walk
   * over a value adds each path at its own level instead of inserting it from the root.
   */
  addMember(pe: PathElement, id: string): void {
    this.encoding = undefined;
    this.members.set(id, pe);
  }

  /** While a set is being built: the level below `pe` (serialized `id`), made when missing. The caller adds to it. */
  child(pe: PathElement, id: string): FieldSet {
    this.encoding = undefined;
    let c = this.children.get(id);
    if (!c) {
      c = { pe, set: new FieldSet() };
      this.children.set(id, c);
    }
    return c.set;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1; i++) {
      node = node.children.get(serializeElement(path[i]!))?.set;
      if (!node) return false;
    }
    return node.members.has(serializeElement(path[path.length - 1]!));
  }

  /** Whether the element itself is a member of this level. */
  hasMember(pe: PathElement): boolean {
    return this.members.has(serializeElement(pe));
  }

  /** The paths below `pe`, relative to it (empty when there are none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializeElement(pe))?.set ?? EMPTY;
  }

  /** Constant time: a set never keeps an empty child (every operation builds bottom-up and prunes). */
  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  // Sets are not changed once built (results share their operands' children), so an operation with an
  // empty operand answers the other operand itself: a create's bookkeeping unites and subtracts empty
  // sets several times, and each copy was a Map per level of the object.
  union(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    if (this.empty()) return other;
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.members.set(id, pe);
    for (const [id, pe] of other.members) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const o = other.children.get(id);
      out.children.set(id, o ? { pe: c.pe, set: c.set.union(o.set) } : c);
    }
    for (const [id, c] of other.children) if (!out.children.has(id)) out.children.set(id, c);
    return out.pruned();
  }

  intersection(other: FieldSet): FieldSet {
    if (this.empty()) return this;
    if (other.empty()) return other;
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (other.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const o = other.children.get(id);
      if (o) out.children.set(id, { pe: c.pe, set: c.set.intersection(o.set) });
    }
    return out.pruned();
  }

  difference(other: FieldSet): FieldSet {
    if (this.empty() || other.empty()) return this;
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!other.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const o = other.children.get(id);
      out.children.set(id, o ? { pe: c.pe, set: c.set.difference(o.set) } : c);
    }
    return out.pruned();
  }

  /** The paths whose first element passes `keep`. */
  select(keep: (pe: PathElement) => boolean): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (keep(pe)) out.members.set(id, pe);
    for (const [id, c] of this.children) if (keep(c.pe)) out.children.set(id, c);
    return out.pruned();
  }

  /** Every member path, in fieldsV1 order. */
  paths(): Path[] {
    const out: Path[] = [];
    this.walk([], (p) => out.push(p));
    return out;
  }

  private walk(prefix: PathElement[], visit: (p: Path) => void): void {
    for (const { id, pe, child } of this.entries()) {
      if (this.members.has(id)) visit([...prefix, pe]);
      child?.walk([...prefix, pe], visit);
    }
  }

  /**
   * The elements of this level, members and children merged, sorted as Kubernetes sorts them: first
   * the members (with their children), then the children of no member, each in the order added, so
   * that the sort sees what it always saw.
   */
  private entries(): Entry[] {
    const out: Entry[] = [];
    for (const [id, pe] of this.members) {
      const c = this.children.get(id);
      out.push(c && !c.set.empty() ? { id, pe: c.pe, child: c.set } : { id, pe });
    }
    for (const [id, c] of this.children) {
      if (!this.members.has(id) && !c.set.empty()) out.push({ id, pe: c.pe, child: c.set });
    }
    return out.length > 1 ? out.sort(byElement) : out;
  }

  /** EnsureNamedFieldsAreMembers: a struct field with owned children counts as owned itself. */
  withNamedFieldsAsMembers(shape: Shape): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      if ("field" in c.pe && shape.kind === "object" && shape.field(c.pe.field)) out.members.set(id, c.pe);
      out.children.set(id, { pe: c.pe, set: c.set.withNamedFieldsAsMembers(elementShape(shape, c.pe)) });
    }
    return out;
  }

  private pruned(): FieldSet {
    for (const [id, c] of this.children) if (c.set.empty()) this.children.delete(id);
    return this;
  }

  /** fieldsV1 (Set.ToJSON): keys in Kubernetes' order, `"."` first where a member has children. */
  toFieldsV1(): FieldsV1 {
    return this.encoding ?? this.emit(false);
  }

  private emit(includeSelf: boolean): FieldsV1 {
    const out: FieldsV1 = {};
    const entries = this.entries();
    if (includeSelf && entries.length > 0) out["."] = {};
    for (const { id, child } of entries) out[id] = child ? child.emit(this.members.has(id)) : {};
    return out;
  }

  /**
   * Set.FromJSON. `canonical`: the JSON is what `toFieldsV1` writes (it was stored by this server), so
   * the set answers it as its own encoding instead of encoding itself again.
   */
  static fromFieldsV1(json: unknown, canonical = false): FieldSet {
    const set = new FieldSet();
    set.read(json);
    if (canonical) set.encoding = json as FieldsV1;
    return set;
  }

  /** Reads one level; answers whether it said `"."` (its parent element is a member). */
  private read(json: unknown): boolean {
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      throw new FieldsV1Error("expected a JSON object");
    }
    let self = false;
    for (const [key, value] of Object.entries(json)) {
      if (key === ".") {
        self = true;
        continue;
      }
      let pe: PathElement;
      try {
        pe = deserializeElement(key);
      } catch (e) {
        throw new FieldsV1Error(`parsing key as path element: ${(e as PathElementError).message}`);
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new FieldsV1Error("expected a JSON object");
      const id = serializeElement(pe);
      if (Object.keys(value).length === 0) {
        this.members.set(id, pe);
        continue;
      }
      const child = new FieldSet();
      if (child.read(value)) this.members.set(id, pe);
      if (!child.empty()) this.children.set(id, { pe, set: child });
    }
    return self;
  }
}

const EMPTY = new FieldSet();

/** The shape of the value an element leads to. */
export function elementShape(shape: Shape, pe: PathElement): Shape {
  if ("field" in pe) return memberShape(shape, pe.field);
  if (shape.kind === "list") return shape.item;
  return untypedShape;
}
