// What the apiserver process needs in its environment from whoever starts it (the launcher, the bench):
// glibc reads its malloc settings only when a process starts, so the apiserver cannot set them itself.

/**
 * Blocks of 64 KiB and more get a mapping of their own from glibc's malloc, returned to the system when
 * freed. Node gives each TLS connection a 64 KiB read buffer; under glibc's default (a threshold that rises
 * to the largest block freed so far) those came from the heap, and what 1,000 closed watch connections had
 * used stayed resident between long-lived blocks: ~40 MiB of the RSS with 100,000 objects stored
 * (docs/benchmarks.md). A setting of the caller's own for the threshold wins.
 */
const MMAP_THRESHOLD = "glibc.malloc.mmap_threshold=65536";

/** `env` with the apiserver's malloc setting added to `GLIBC_TUNABLES` (ignored by other C libraries). */
export function apiserverEnvironment<E extends Record<string, string | undefined>>(env: E): E & { GLIBC_TUNABLES: string } {
  const tunables = env.GLIBC_TUNABLES ?? "";
  if (/(^|:)glibc\.malloc\.mmap_threshold=/.test(tunables)) return { ...env, GLIBC_TUNABLES: tunables };
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${MMAP_THRESHOLD}` : MMAP_THRESHOLD };
}
