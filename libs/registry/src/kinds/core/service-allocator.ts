// ClusterIP and NodePort allocation, as Kubernetes' ipallocator and portallocator hand them out, with
// the allocated set derived from the stored Services rather than kept as a bitmap of its own: the
// apiserver feeds `observe`/`forget` from every commit of a Service (a StorageInformer, synchronous with
// the commit), so a restart rebuilds the set from storage and a deleted Service's values are free again
// as soon as the delete commits. Between the allocation and the commit of the Service that asked, a value
// is held by a reservation, so two creates in flight never get the same one; a reservation whose create
// failed lapses after RESERVATION_MS (Kubernetes releases it at once; it has a transaction to hook into).

/** Longer than any request may take (ORCH_REQUEST_TIMEOUT_SECONDS defaults to 60). */
const RESERVATION_MS = 5 * 60 * 1000;

/** Values taken from a range of integers, each held by one owner (a Service's uid). */
export class RangeAllocator {
  /** value → uid of the stored Service holding it. */
  private readonly held = new Map<number, string>();
  private readonly heldBy = new Map<string, number[]>();
  /** value → the create in flight that was given it. */
  private readonly reserved = new Map<number, { uid: string; until: number }>();

  constructor(
    /** The first and last value that may be handed out. */
    readonly first: number,
    readonly last: number,
    /** Dynamic allocation prefers values above this one; the ones below are for callers who ask (Kubernetes' reserved band). */
    private readonly dynamicFrom: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The values a stored object holds now (replacing what it held before). */
  observe(uid: string, values: readonly number[]): void {
    this.forget(uid);
    this.heldBy.set(uid, [...values]);
    for (const value of values) {
      this.held.set(value, uid);
      if (this.reserved.get(value)?.uid === uid) this.reserved.delete(value);
    }
  }

  /** The object is gone: its values are free. */
  forget(uid: string): void {
    for (const value of this.heldBy.get(uid) ?? []) if (this.held.get(value) === uid) this.held.delete(value);
    this.heldBy.delete(uid);
  }

  inRange(value: number): boolean {
    return value >= this.first && value <= this.last;
  }

  private free(value: number, uid: string): boolean {
    const holder = this.held.get(value);
    if (holder !== undefined && holder !== uid) return false;
    const reservation = this.reserved.get(value);
    if (reservation && reservation.uid !== uid && reservation.until > this.now()) return false;
    return true;
  }

  /** Takes `value` for `uid`; false when someone else holds it. */
  take(value: number, uid: string): boolean {
    if (!this.free(value, uid)) return false;
    this.reserved.set(value, { uid, until: this.now() + RESERVATION_MS });
    return true;
  }

  /** A free value for `uid`: from a random point of the dynamic band, then the rest; undefined when full. */
  next(uid: string): number | undefined {
    const scan = (from: number, to: number): number | undefined => {
      if (from > to) return undefined;
      const size = to - from + 1;
      const start = Math.floor(Math.random() * size);
      for (let i = 0; i < size; i++) {
        const value = from + ((start + i) % size);
        if (this.take(value, uid)) return value;
      }
      return undefined;
    };
    return scan(this.dynamicFrom, this.last) ?? scan(this.first, this.dynamicFrom - 1);
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

/** Kubernetes' default --service-cluster-ip-range and --service-node-port-range. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12";
export const NODE_PORT_FIRST = 30000;
export const NODE_PORT_LAST = 32767;

/** The band of a range Kubernetes keeps for static allocation: min(max(16, size/16), 256) values. */
const reservedBand = (size: number): number => Math.min(Math.max(16, Math.floor(size / 16)), 256);

/** What the Service kind allocates from: its cluster IPs and node ports. */
export class ServiceAllocators {
  readonly range: Ipv4Range;
  readonly clusterIPs: RangeAllocator;
  readonly nodePorts: RangeAllocator;

  constructor(cidr: string = DEFAULT_SERVICE_CLUSTER_IP_RANGE, now: () => number = Date.now) {
    this.range = parseIpv4Range(cidr);
    // Neither the network address nor the broadcast address is handed out.
    const first = this.range.base + 1;
    const last = this.range.base + this.range.size - 2;
    this.clusterIPs = new RangeAllocator(first, last, Math.min(last, first + reservedBand(this.range.size - 2)), now);
    const ports = NODE_PORT_LAST - NODE_PORT_FIRST + 1;
    this.nodePorts = new RangeAllocator(NODE_PORT_FIRST, NODE_PORT_LAST, NODE_PORT_FIRST + reservedBand(ports), now);
  }

  /** The address of the `kubernetes` Service: the first of the range. */
  get firstAddress(): string {
    return numberToIpv4(this.clusterIPs.first);
  }

  /** Records what a stored Service holds. */
  observe(service: {
    metadata: { uid?: string };
    spec?: { clusterIPs?: string[]; clusterIP?: string; ports?: { nodePort?: number }[] };
  }): void {
    const uid = service.metadata.uid;
    if (!uid) return;
    const ips = (service.spec?.clusterIPs ?? (service.spec?.clusterIP ? [service.spec.clusterIP] : []))
      .map(ipv4ToNumber)
      .filter((n): n is number => n !== undefined);
    this.clusterIPs.observe(uid, ips);
    this.nodePorts.observe(
      uid,
      (service.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0),
    );
  }

  forget(service: { metadata: { uid?: string } }): void {
    if (!service.metadata.uid) return;
    this.clusterIPs.forget(service.metadata.uid);
    this.nodePorts.forget(service.metadata.uid);
  }
}
