// ClusterIP and NodePort allocation, as Kubernetes' IPAddress-based ipallocator hands out addresses:
// every allocated value is a record in storage named by the value (`ranges/serviceips` `10.96.0.10`,
// `ranges/servicenodeports` `30080`, after the keys Kubernetes' bitmap allocators kept in etcd), created
// before the Service that holds it is written. A create fails on a taken key in both engines and across
// every apiserver sharing one database, so a value goes to one Service only, whichever replica asks; the
// loser tries another value.
//
// A record is freed (deleted) when its Service lets go of the value: a write that then fails gives back
// what it took at once (`ServiceAllocators.revert`); a committed delete, or an update that drops a value,
// frees it on every replica that hears of the commit (a record is deleted only while its holder's uid
// is on it, so a late replica never frees a value someone else has taken since); and the leader's repair
// pass (apps/apiserver) writes records missing for stored Services — a data directory from before
// records existed — and deletes those a process left behind when it died between record and Service.
//
// Each replica also indexes the values of the stored Services it has heard of (fed by the apiserver
// from every commit of a Service): a value a stored Service holds is never tried, records or not.
import { rfc3339 } from "@orch/machinery";
import { KeyExistsError, KeyNotFoundError, type ObjectKey, RevisionConflictError, type Storage } from "@orch/storage";

/** The Service a value is allocated to. */
export interface Holder {
  namespace: string;
  name: string;
  uid: string;
}

/** A stored allocation record: which Service holds the value it is named by (Kubernetes' IPAddress spec). */
export type AllocationRecord = {
  metadata: { name: string; creationTimestamp: string; resourceVersion?: string };
  spec: { parentRef: { group: ""; resource: "services"; namespace: string; name: string; uid: string } };
};

/** The records of one range in storage: one object per allocated value, named by the value. */
export class AllocationRecords {
  constructor(
    private readonly storage: Storage,
    /** The storage resource, not served: `ranges/serviceips`, `ranges/servicenodeports`. */
    readonly resource: string,
    readonly format: (value: number) => string,
    readonly parse: (name: string) => number | undefined,
  ) {}

  private key(value: number): ObjectKey {
    return { resource: this.resource, namespace: "", name: this.format(value) };
  }

  /** Writes the record of `value` for `holder`: true when it is now the holder's (or already was), false when another Service's. */
  async claim(value: number, holder: Holder): Promise<boolean> {
    const record: AllocationRecord = {
      metadata: { name: this.format(value), creationTimestamp: rfc3339() },
      spec: { parentRef: { group: "", resource: "services", ...holder } },
    };
    try {
      await this.storage.create(this.key(value), record);
      return true;
    } catch (e) {
      if (!(e instanceof KeyExistsError)) throw e;
      return (await this.read(value))?.record.spec.parentRef.uid === holder.uid;
    }
  }

  /** Deletes the record of `value` if the Service `uid` holds it still. */
  async release(value: number, uid: string): Promise<void> {
    const stored = await this.read(value);
    if (stored?.record.spec.parentRef.uid !== uid) return;
    try {
      await this.storage.delete(this.key(value), stored.record, stored.revision);
    } catch (e) {
      // Freed by another replica meanwhile (and perhaps taken again): nothing of ours is left.
      if (!(e instanceof KeyNotFoundError || e instanceof RevisionConflictError)) throw e;
    }
  }

  private async read(value: number): Promise<{ record: AllocationRecord; revision: number } | undefined> {
    const stored = await this.storage.get(this.key(value));
    return stored && { record: JSON.parse(stored.value) as AllocationRecord, revision: stored.revision };
  }

  /** Every record, with its value. */
  async list(): Promise<{ value: number; record: AllocationRecord }[]> {
    const { items } = await this.storage.list({ resource: this.resource });
    return items.flatMap((item) => {
      const value = this.parse(item.name);
      return value === undefined ? [] : [{ value, record: JSON.parse(item.value) as AllocationRecord }];
    });
  }
}

/** Values taken from a range of integers, each held by one Service. */
export class RangeAllocator {
  /** value → uid of the stored Service holding it, as far as this replica has heard. */
  private readonly held = new Map<number, string>();
  private readonly heldBy = new Map<string, number[]>();
  /** Releases under way: an allocation waits for them, so what a delete answered here freed is free to the next request. */
  private readonly releasing = new Set<Promise<void>>();

  constructor(
    /** The first and last value that may be handed out. */
    readonly first: number,
    readonly last: number,
    /** Dynamic allocation prefers values above this one; the ones below are for callers who ask (Kubernetes' reserved band). */
    private readonly dynamicFrom: number,
    readonly records: AllocationRecords,
  ) {}

  /** The values a stored Service holds now (replacing what it held before). */
  observe(uid: string, values: readonly number[]): void {
    this.forget(uid);
    this.heldBy.set(uid, [...values]);
    for (const value of values) this.held.set(value, uid);
  }

  /** The Service is gone: its values are free. */
  forget(uid: string): void {
    for (const value of this.heldBy.get(uid) ?? []) if (this.held.get(value) === uid) this.held.delete(value);
    this.heldBy.delete(uid);
  }

  inRange(value: number): boolean {
    return value >= this.first && value <= this.last;
  }

  /** Takes `value` for `holder`: false when another Service holds it. */
  async take(value: number, holder: Holder): Promise<boolean> {
    await Promise.all(this.releasing);
    const owner = this.held.get(value);
    if (owner !== undefined && owner !== holder.uid) return false;
    return this.records.claim(value, holder);
  }

  /**
   * A free value for `holder`, other than `besides` (what its write took already): from a random point of
   * the dynamic band, then the rest; undefined when full.
   */
  async next(holder: Holder, besides: readonly number[] = []): Promise<number | undefined> {
    const scan = async (from: number, to: number): Promise<number | undefined> => {
      const size = to - from + 1;
      const start = Math.floor(Math.random() * size);
      for (let i = 0; i < size; i++) {
        const value = from + ((start + i) % size);
        if (!this.held.has(value) && !besides.includes(value) && (await this.records.claim(value, holder))) return value;
      }
      return undefined;
    };
    await Promise.all(this.releasing);
    return (await scan(this.dynamicFrom, this.last)) ?? (await scan(this.first, this.dynamicFrom - 1));
  }

  /** Frees `value` if the Service `uid` holds its record; in the background, failures to `onError`. */
  release(value: number, uid: string, onError: (e: unknown) => void): void {
    const releasing: Promise<void> = this.records
      .release(value, uid)
      .catch(onError)
      .finally(() => this.releasing.delete(releasing));
    this.releasing.add(releasing);
  }
}

/** An IPv4 CIDR such as `10.96.0.0/12`, as a number range. */
export interface Ipv4Range {
  cidr: string;
  base: number;
  size: number;
}

export function ipv4ToNumber(ip: string): number | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export const numberToIpv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

/** Parses `--service-cluster-ip-range`: IPv4, a prefix of /8 to /30 (Kubernetes refuses ranges over 2^20 only for IPv6). */
export function parseIpv4Range(cidr: string): Ipv4Range {
  const [address = "", prefixText = ""] = cidr.split("/");
  const ip = ipv4ToNumber(address);
  const prefix = /^\d{1,2}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (ip === undefined || !(prefix >= 8 && prefix <= 30))
    throw new Error(`service cluster IP range ${JSON.stringify(cidr)} is not an IPv4 CIDR from /8 to /30`);
  const size = 2 ** (32 - prefix);
  const base = ip - (ip % size);
  return { cidr: `${numberToIpv4(base)}/${prefix}`, base, size };
}

/** A node port range, `first-last`. */
export interface PortRange {
  first: number;
  last: number;
}

/** Parses `--service-node-port-range` (`30000-32767`): ports from 1 to 65535, first ≤ last. */
export function parsePortRange(text: string): PortRange {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (!(first >= 1 && last <= 65535 && first <= last))
    throw new Error(`service node port range ${JSON.stringify(text)} is not first-last, ports from 1 to 65535`);
  return { first, last };
}

/** Kubernetes' default --service-cluster-ip-range and --service-node-port-range. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12";
export const DEFAULT_SERVICE_NODE_PORT_RANGE: PortRange = { first: 30000, last: 32767 };

/** The band of a range Kubernetes keeps for static allocation: min(max(16, size/16), 256) values. */
const reservedBand = (size: number): number => Math.min(Math.max(16, Math.floor(size / 16)), 256);

/** The values a Service holds, as numbers. */
export function heldValues(service: ServiceValues): { ips: number[]; ports: number[] } {
  const spec = service.spec;
  const ips = (spec?.clusterIPs ?? (spec?.clusterIP ? [spec.clusterIP] : [])).map(ipv4ToNumber).filter((n): n is number => n !== undefined);
  const ports = [...new Set((spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0))];
  return { ips, ports };
}

/** What allocation reads of a Service. */
export interface ServiceValues {
  metadata: { uid?: string; namespace?: string; name?: string };
  spec?: { clusterIPs?: string[]; clusterIP?: string; ports?: { nodePort?: number }[] };
}

/** What the Service kind allocates from: its cluster IPs and node ports, recorded in `storage`. */
export class ServiceAllocators {
  readonly range: Ipv4Range;
  readonly clusterIPs: RangeAllocator;
  readonly nodePorts: RangeAllocator;
  /** What each write's allocation took, until the write commits or is reverted. */
  private readonly taken = new WeakMap<object, { allocator: RangeAllocator; value: number }[]>();

  constructor(
    storage: Storage,
    cidr: string = DEFAULT_SERVICE_CLUSTER_IP_RANGE,
    ports: PortRange = DEFAULT_SERVICE_NODE_PORT_RANGE,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {
    this.range = parseIpv4Range(cidr);
    // Neither the network address nor the broadcast address is handed out.
    const first = this.range.base + 1;
    const last = this.range.base + this.range.size - 2;
    const ipRecords = new AllocationRecords(storage, "ranges/serviceips", numberToIpv4, ipv4ToNumber);
    this.clusterIPs = new RangeAllocator(first, last, Math.min(last, first + reservedBand(this.range.size - 2)), ipRecords);
    const portRecords = new AllocationRecords(storage, "ranges/servicenodeports", String, (name) =>
      /^\d{1,5}$/.test(name) ? Number(name) : undefined,
    );
    const size = ports.last - ports.first + 1;
    this.nodePorts = new RangeAllocator(ports.first, ports.last, Math.min(ports.last, ports.first + reservedBand(size)), portRecords);
  }

  /** The address of the `kubernetes` Service: the first of the range. */
  get firstAddress(): string {
    return numberToIpv4(this.clusterIPs.first);
  }

  /** Takes `value` from `allocator` for the Service `service` is being written as; remembered until `revert`. */
  async take(allocator: RangeAllocator, value: number | undefined, service: ServiceValues): Promise<number | undefined> {
    const holder = holderOf(service);
    const taken = this.taken.get(service) ?? [];
    const got =
      value === undefined
        ? await allocator.next(
            holder,
            taken.filter((t) => t.allocator === allocator).map((t) => t.value),
          )
        : (await allocator.take(value, holder))
          ? value
          : undefined;
    if (got !== undefined) this.taken.set(service, [...taken, { allocator, value: got }]);
    return got;
  }

  /** The write of `service` did not commit: frees what its allocation took. */
  async revert(service: ServiceValues): Promise<void> {
    const taken = this.taken.get(service) ?? [];
    this.taken.delete(service);
    const uid = service.metadata.uid ?? "";
    await Promise.all(taken.map(({ allocator, value }) => allocator.records.release(value, uid).catch(this.onError)));
  }

  /** A Service's write committed (ADDED or MODIFIED): indexes what it holds, and frees what `old` held that it no longer does. */
  observe(service: ServiceValues, old?: ServiceValues): void {
    const uid = service.metadata.uid;
    if (!uid) return;
    const now = heldValues(service);
    this.clusterIPs.observe(uid, now.ips);
    this.nodePorts.observe(uid, now.ports);
    if (old) this.free(old, now);
  }

  /** A Service's delete committed: its values are free. */
  forget(service: ServiceValues): void {
    const uid = service.metadata.uid;
    if (!uid) return;
    this.clusterIPs.forget(uid);
    this.nodePorts.forget(uid);
    this.free(service, { ips: [], ports: [] });
  }

  private free(before: ServiceValues, now: { ips: number[]; ports: number[] }): void {
    const uid = before.metadata.uid ?? "";
    const was = heldValues(before);
    for (const ip of was.ips) if (!now.ips.includes(ip)) this.clusterIPs.release(ip, uid, this.onError);
    for (const port of was.ports) if (!now.ports.includes(port)) this.nodePorts.release(port, uid, this.onError);
  }
}

const holderOf = (service: ServiceValues): Holder => ({
  namespace: service.metadata.namespace ?? "",
  name: service.metadata.name ?? "",
  uid: service.metadata.uid ?? "",
});
