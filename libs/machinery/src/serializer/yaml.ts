// YAML bodies as Kubernetes takes them (sigs.k8s.io/yaml on go-yaml): converted to the JSON value they
// spell, with go-yaml's limits: at most MAX_NESTING_DEPTH levels, counting levels reached through
// aliases, and no alias expansion that makes up most of the document ("excessive aliasing", the
// billion-laughs guard). The yaml library parses; the conversion is done here, without recursion and
// with one lookup per alias (the library's own toJS scans every anchor for each alias).
import { type CST, Composer, type Document, type Node, Parser, isAlias, isMap, isPair, isScalar, isSeq } from "yaml";
import { DecodeError, MAX_NESTING_DEPTH, TooDeepError } from "./json.js";

export interface DecodedYaml {
  value: unknown;
  /** Keys repeated within one mapping, as field paths (`metadata.name`, `spec.items[0].a`). */
  duplicates: string[];
}

/** Converts one YAML document to its JSON value; DecodeError when it is malformed or over the limits. */
export function decodeYaml(text: string, maxDepth = MAX_NESTING_DEPTH): DecodedYaml {
  // The parser builds its syntax tree without recursion; the composer recurses over it, so the tree's
  // depth is checked in between.
  const tokens = [...new Parser().parse(text)];
  for (const token of tokens) checkDepth(token, maxDepth);
  let doc: Document.Parsed | undefined;
  for (const next of new Composer({ uniqueKeys: false }).compose(tokens, true, text.length)) {
    if (doc) throw new DecodeError("yaml: source contains multiple documents");
    doc = next;
  }
  if (!doc) return { value: null, duplicates: [] };
  const error = doc.errors[0];
  if (error) throw new DecodeError(`yaml: ${error.message.split("\n")[0]}`);
  return new Converter(maxDepth).convert(doc.contents);
}

function checkDepth(root: CST.Token, maxDepth: number): void {
  const stack: [CST.Token, number][] = [[root, 0]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [token, depth] = entry;
    if (token.type === "document") {
      if (token.value) stack.push([token.value, depth]);
    } else if (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection") {
      if (depth + 1 > maxDepth) throw new TooDeepError(`yaml: exceeded max depth of ${maxDepth}`);
      for (const item of token.items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
}

// go-yaml fails a decode once nodes reached through aliases are more than this share of all nodes decoded:
// 99% up to 400,000 nodes, falling to 10% at 4,000,000.
const ALIAS_RATIO_LOW = 400_000;
const ALIAS_RATIO_HIGH = 4_000_000;
function allowedAliasRatio(decoded: number): number {
  if (decoded <= ALIAS_RATIO_LOW) return 0.99;
  if (decoded >= ALIAS_RATIO_HIGH) return 0.1;
  return 0.99 - (0.89 * (decoded - ALIAS_RATIO_LOW)) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW);
}

type Container = Record<string, unknown> | unknown[];

/** A collection being converted: its items are taken one at a time, so the stack stays on the heap. */
interface Frame {
  node: Node;
  value: Container;
  items: readonly unknown[];
  next: number;
  path: string;
  depth: number;
  /** How many aliases lead here: what is decoded inside one counts as alias expansion. */
  aliases: number;
  keys?: Set<string>;
}

class Converter {
  private readonly anchors = new Map<string, Node>();
  /** Anchored collections still being converted: an alias to one of them would contain itself. */
  private readonly open = new Set<Node>();
  private readonly duplicates: string[] = [];
  private readonly stack: Frame[] = [];
  private decoded = 0;
  private expanded = 0;

  constructor(private readonly maxDepth: number) {}

  convert(root: unknown): DecodedYaml {
    let result: unknown = null;
    this.enter(root, "", 0, 0, (v) => (result = v));
    while (this.stack.length > 0) {
      const frame = this.stack[this.stack.length - 1]!;
      if (frame.next >= frame.items.length) {
        this.stack.pop();
        this.open.delete(frame.node);
        continue;
      }
      const item = frame.items[frame.next++];
      if (Array.isArray(frame.value)) {
        const list = frame.value;
        this.enter(item, `${frame.path}[${list.length}]`, frame.depth, frame.aliases, (v) => list.push(v));
      } else if (isPair(item)) {
        const key = this.key(item.key, frame.aliases);
        if (frame.keys!.has(key)) {
          if (frame.aliases === 0) this.duplicates.push(frame.path ? `${frame.path}.${key}` : key);
        } else frame.keys!.add(key);
        const map = frame.value;
        this.enter(item.value, frame.path ? `${frame.path}.${key}` : key, frame.depth, frame.aliases, (v) => setKey(map, key, v));
      }
    }
    return { value: result, duplicates: this.duplicates };
  }

  /** Converts a scalar at once, or opens a frame for a collection; an alias continues at its anchor. */
  private enter(node: unknown, path: string, depth: number, aliases: number, assign: (value: unknown) => void): void {
    for (;;) {
      this.count(aliases);
      if (!isAlias(node)) break;
      const target = this.anchors.get(node.source);
      if (!target) throw new DecodeError(`yaml: unknown anchor '${node.source}' referenced`);
      if (this.open.has(target)) throw new DecodeError(`yaml: anchor '${node.source}' value contains itself`);
      node = target;
      aliases++;
    }
    if (node == null) return assign(null);
    const anchored = node as Node;
    // Anchors are registered as the document is read; aliases see the latest one before them.
    if (aliases === 0 && anchored.anchor) this.anchors.set(anchored.anchor, anchored);
    if (isScalar(node)) return assign(jsonScalar(node.value));
    if (!isMap(node) && !isSeq(node)) throw new DecodeError("yaml: unsupported node");
    if (depth + 1 > this.maxDepth) throw new TooDeepError(`yaml: exceeded max depth of ${this.maxDepth}`);
    const value: Container = isSeq(node) ? [] : {};
    assign(value);
    this.open.add(anchored);
    this.stack.push({
      node: anchored,
      value,
      items: node.items,
      next: 0,
      path,
      depth: depth + 1,
      aliases,
      keys: isMap(node) ? new Set() : undefined,
    });
  }

  /** A mapping key as a JSON object key: scalars as text, as sigs.k8s.io/yaml writes them. */
  private key(node: unknown, aliases: number): string {
    if (aliases === 0 && isScalar(node) && node.anchor) this.anchors.set(node.anchor, node);
    while (isAlias(node)) {
      this.count(aliases);
      const source: string = node.source;
      node = this.anchors.get(source);
      if (!node) throw new DecodeError(`yaml: unknown anchor '${source}' referenced`);
    }
    if (node == null) return "null";
    if (!isScalar(node)) throw new DecodeError("yaml: invalid map key: a mapping or sequence");
    const value = jsonScalar(node.value);
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  private count(aliases: number): void {
    this.decoded++;
    if (aliases > 0) this.expanded++;
    if (this.expanded > 100 && this.decoded > 1000 && this.expanded / this.decoded > allowedAliasRatio(this.decoded)) {
      throw new DecodeError("yaml: document contains excessive aliasing");
    }
  }
}

/** A scalar's JSON value: JSON has no infinities, NaN or big integers (go-yaml's JSON conversion fails too). */
function jsonScalar(value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) throw new DecodeError(`json: unsupported value: ${value}`);
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value === undefined ? null : value;
}

/** `__proto__` is an ordinary key in JSON: defined, not assigned (which would set the prototype). */
function setKey(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
  else map[key] = value;
}
