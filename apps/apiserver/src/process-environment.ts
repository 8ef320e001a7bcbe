// What the apiserver process needs in its environment from whoever starts it (the launcher, the bench):
// glibc reads its malloc settings only when a process starts, so the apiserver cannot set them itself.

/**
 * - Blocks of 64 KiB and more get a mapping of their own, returned to the system when freed. Node gives
 *   each TLS connection a 64 KiB read buffer; under glibc's default (a threshold that rises to the
 *   largest block freed so far) those came from the heap, and what 1,000 closed watch connections had
 *   used stayed resident between long-lived blocks: ~40 MiB of the RSS with 100,000 objects stored.
 * - Those mappings are asked for transparent huge pages where the kernel grants them on request: a list of
 *   10,000 objects maps its body and its TLS output (4 MiB each) afresh, and faulting them in 4 KiB
 *   pages cost it ~30 % more CPU; with 2 MiB pages ~12 % (docs/benchmarks.md).
 * A setting of the caller's own for either wins.
 */
const TUNABLES = ["glibc.malloc.mmap_threshold=65536", "glibc.malloc.hugetlb=1"];

/** `env` with the apiserver's malloc settings added to `GLIBC_TUNABLES` (ignored by other C libraries). */
export function apiserverEnvironment<E extends Record<string, string | undefined>>(env: E): E & { GLIBC_TUNABLES: string } {
  const own = env.GLIBC_TUNABLES ? env.GLIBC_TUNABLES.split(":") : [];
  const named = new Set(own.map((t) => t.split("=")[0]));
  const added = TUNABLES.filter((t) => !named.has(t.split("=")[0]));
  return { ...env, GLIBC_TUNABLES: [...own, ...added].join(":") };
}
