// IPv4 addresses of the simulated nodes and their pods: node i has the (i+1)-th address of the node
// range as its InternalIP and the i-th /24 of the cluster range as its podCIDR; a pod gets the lowest
// free address of its node's podCIDR from .2 on (.1 is the node's bridge, as with kubenet and flannel).

const toInt = (ip: string): number => {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: ${ip}`);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
};
const toIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

function parseCidr(cidr: string): { base: number; bits: number } {
  const [ip, bitsText] = cidr.split("/");
  const bits = Number(bitsText);
  if (!ip || !Number.isInteger(bits) || bits < 0 || bits > 32) throw new Error(`not an IPv4 CIDR: ${cidr}`);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (toInt(ip) & mask) >>> 0, bits };
}

/** The i-th /24 of `clusterCidr`. */
export function nodePodCidr(clusterCidr: string, index: number): string {
  const { base, bits } = parseCidr(clusterCidr);
  if (bits > 24 || index >= 2 ** (24 - bits)) throw new Error(`${clusterCidr} has no room for a /24 for node ${index}`);
  return `${toIp((base + index * 256) >>> 0)}/24`;
}

/** The (i+1)-th address of `nodeCidr`. */
export function nodeAddress(nodeCidr: string, index: number): string {
  const { base, bits } = parseCidr(nodeCidr);
  if (index + 1 >= 2 ** (32 - bits) - 1) throw new Error(`${nodeCidr} has no address for node ${index}`);
  return toIp((base + index + 1) >>> 0);
}

/** Pod addresses of one node's /24: taken ones are remembered by pod uid, so a restart can re-learn them. */
export class PodAddresses {
  private readonly base: number;
  private readonly byPod = new Map<string, number>();
  private readonly taken = new Set<number>();

  constructor(podCidr: string) {
    this.base = parseCidr(podCidr).base;
  }

  /** The pod's address: the one it has, else the lowest free one; undefined when the range is full. */
  assign(uid: string, existing?: string): string | undefined {
    const held = this.byPod.get(uid);
    if (held !== undefined) return toIp(this.base + held);
    if (existing) {
      const offset = toInt(existing) - this.base;
      if (offset >= 2 && offset <= 254 && !this.taken.has(offset)) {
        this.hold(uid, offset);
        return existing;
      }
    }
    for (let offset = 2; offset <= 254; offset++) {
      if (!this.taken.has(offset)) {
        this.hold(uid, offset);
        return toIp(this.base + offset);
      }
    }
    return undefined;
  }

  release(uid: string): void {
    const offset = this.byPod.get(uid);
    if (offset === undefined) return;
    this.byPod.delete(uid);
    this.taken.delete(offset);
  }

  private hold(uid: string, offset: number): void {
    this.byPod.set(uid, offset);
    this.taken.add(offset);
  }
}
