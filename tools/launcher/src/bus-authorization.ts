// Applies the bus authorization file the apiserver keeps from RBAC to the launcher's nats-servers: on
// each change, a reload (SIGHUP); then every consumer of the event stream is deleted, because a
// consumer created under rights since revoked would otherwise go on delivering. Informers recreate
// theirs from where they were (no relist, nothing lost), now under the new rights.
import { EVENTS_STREAM } from "@orch/events";
import { type FSWatcher, existsSync, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { type ConnectionOptions, connect } from "nats";
import type { Supervised } from "./supervisor.js";

const RELOADED = "Reloaded server configuration";

export interface BusAuthorizationFollower {
  stop(): void;
}

export function followBusAuthorization(
  file: string,
  servers: Supervised[],
  admin: ConnectionOptions,
  log: (line: string) => void,
): BusAuthorizationFollower {
  // What the running server has: it read the file when it started.
  let applied = read(file);
  let timer: NodeJS.Timeout | undefined;
  let applying: Promise<void> = Promise.resolve();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => (applying = applying.then(apply)), 50);
  };
  const apply = async () => {
    const text = read(file);
    if (text === undefined || text === applied) return;
    try {
      await Promise.all(servers.map((nats) => nats.signalAndWait("SIGHUP", (line) => line.includes(RELOADED))));
      applied = text;
      const deleted = await deleteConsumers(admin);
      log(`[launcher] bus authorization reloaded from RBAC${deleted ? `; ${deleted} consumers to be recreated under it` : ""}`);
    } catch (e) {
      log(`[launcher] bus authorization not applied: ${(e as Error).message}; retrying`);
      schedule();
    }
  };
  const watcher: FSWatcher = watch(dirname(file), (_event, name) => name === basename(file) && schedule());
  // A change made while the server was starting.
  schedule();
  return {
    stop() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : undefined);

async function deleteConsumers(admin: ConnectionOptions): Promise<number> {
  const nc = await connect({ ...admin, name: "orch-launcher-bus-authorization", timeout: 2_000 });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 2_000 });
    let deleted = 0;
    for await (const consumer of jsm.consumers.list(EVENTS_STREAM)) {
      await jsm.consumers.delete(EVENTS_STREAM, consumer.name).catch(() => undefined);
      deleted++;
    }
    return deleted;
  } catch (e) {
    // No stream yet: no consumer either.
    if (/stream not found/i.test((e as Error).message)) return 0;
    throw e;
  } finally {
    await nc.close();
  }
}
