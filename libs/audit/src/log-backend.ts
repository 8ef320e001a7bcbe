// The log backend (Kubernetes' --audit-log-path): one JSON event per line, appended to a file, or to
// standard output for `-`. The file is rotated by size and old files are pruned as lumberjack, which
// Kubernetes uses, does it: `audit.log` becomes `audit-2006-01-02T15-04-05.000.log` (UTC).
//
// A request never waits for the disk: events queue in memory and one write at a time drains the queue.
// A failed write is reported and its events are lost; the requests behind them are not failed.
import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import type { AuditEvent, AuditSink } from "./event.js";

export interface LogBackendOptions {
  /** A file, or `-` for standard output. */
  path: string;
  /** Rotate once the file would grow past this many megabytes; 0 means lumberjack's default, 100. */
  maxSizeMB?: number;
  /** Old files kept after rotation; 0 keeps them all (lumberjack's default). */
  maxBackups?: number;
  /** Where a failed write is reported. */
  onError: (message: string, error: unknown) => void;
  /** Events waiting for the disk beyond this many bytes are dropped (and reported) instead of queued. */
  maxQueuedBytes?: number;
}

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
const DEFAULT_MAX_QUEUED_BYTES = 64 * MEGABYTE;
/** Report repeated failures at most this often. */
const REPORT_EVERY_MS = 10_000;

/** Opens the backend; a file that cannot be created or opened refuses start-up here, not on the first request. */
export async function openLogBackend(options: LogBackendOptions): Promise<AuditSink> {
  if (options.path === "-") return new StdoutBackend(options);
  const backend = new FileBackend(options);
  await backend.open();
  return backend;
}

class StdoutBackend implements AuditSink {
  constructor(private readonly options: LogBackendOptions) {}

  write(event: AuditEvent): void {
    const line = serialize(event, this.options);
    if (line !== undefined) process.stdout.write(line);
  }
  async close(): Promise<void> {}
}

class FileBackend implements AuditSink {
  private handle: FileHandle | undefined;
  private size = 0;
  private queue: string[] = [];
  private queuedBytes = 0;
  private draining: Promise<void> | undefined;
  private dropped = 0;
  private lastReport = 0;
  private readonly maxBytes: number;
  private readonly maxQueuedBytes: number;

  constructor(private readonly options: LogBackendOptions) {
    this.maxBytes = (options.maxSizeMB || DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  }

  async open(): Promise<void> {
    await mkdir(dirname(this.options.path), { recursive: true, mode: 0o700 });
    this.handle = await open(this.options.path, "a", 0o600);
    this.size = (await this.handle.stat()).size;
  }

  write(event: AuditEvent): void {
    const line = serialize(event, this.options);
    if (line === undefined) return;
    if (this.queuedBytes + line.length > this.maxQueuedBytes) {
      this.dropped++;
      this.report("audit log is not keeping up; events dropped", new Error(`${this.dropped} events dropped so far`));
      return;
    }
    this.queue.push(line);
    this.queuedBytes += line.length;
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  async close(): Promise<void> {
    while (this.draining) await this.draining;
    await this.handle?.close();
    this.handle = undefined;
  }

  /**
   * Writes what is queued, as few writes as the size limit allows: events queued together go out in one
   * write, but the file rotates before any event that would take it past the limit, as lumberjack rotates
   * before each write (a backlog written in one piece made one file several times the limit).
   */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const lines = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      try {
        let chunk: Buffer[] = [];
        let chunkBytes = 0;
        for (const line of lines) {
          const data = Buffer.from(line);
          if (this.size + chunkBytes > 0 && this.size + chunkBytes + data.length > this.maxBytes) {
            if (chunk.length > 0) await this.append(Buffer.concat(chunk));
            chunk = [];
            chunkBytes = 0;
            await this.rotate();
          }
          chunk.push(data);
          chunkBytes += data.length;
        }
        if (chunk.length > 0) await this.append(Buffer.concat(chunk));
      } catch (e) {
        this.report("writing the audit log failed; events lost", e);
      }
    }
  }

  private async append(data: Buffer): Promise<void> {
    if (!this.handle) this.handle = await open(this.options.path, "a", 0o600);
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await this.handle.write(data, offset);
      offset += bytesWritten;
      this.size += bytesWritten;
    }
  }

  private async rotate(): Promise<void> {
    const path = this.options.path;
    await this.handle?.close();
    this.handle = undefined;
    this.size = 0;
    await rename(path, freeBackupName(path));
    this.handle = await open(path, "a", 0o600);
    await this.prune();
  }

  /** Keeps the newest `maxBackups` rotated files (their names sort by time). */
  private async prune(): Promise<void> {
    const keep = this.options.maxBackups ?? 0;
    if (keep <= 0) return;
    const path = this.options.path;
    const extension = extname(path);
    const prefix = `${basename(path, extension)}-`;
    const backups = (await readdir(dirname(path)))
      .filter(
        (name) =>
          name.startsWith(prefix) &&
          name.endsWith(extension) &&
          BACKUP_TIME.test(name.slice(prefix.length, name.length - extension.length)),
      )
      .sort();
    for (const name of backups.slice(0, Math.max(0, backups.length - keep))) await rm(join(dirname(path), name), { force: true });
  }

  private report(message: string, error: unknown): void {
    const now = Date.now();
    if (now - this.lastReport < REPORT_EVERY_MS) return;
    this.lastReport = now;
    this.options.onError(message, error);
  }
}

/** The event's line; undefined (and reported) for one that cannot be serialized, which loses that event only. */
function serialize(event: AuditEvent, options: LogBackendOptions): string | undefined {
  try {
    return `${JSON.stringify(event)}\n`;
  } catch (e) {
    options.onError("an audit event could not be serialized; event lost", e);
    return undefined;
  }
}

const BACKUP_TIME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}$/;

/** lumberjack's backup name: the time of rotation (UTC) between the file's name and its extension. */
/**
 * The backup name of now, or of the next millisecond whose name is free: two rotations within one
 * millisecond (a backlog of large events) would otherwise rename the second over the first.
 */
function freeBackupName(path: string): string {
  for (let at = Date.now(); ; at++) {
    const name = backupName(path, new Date(at));
    if (!existsSync(name)) return name;
  }
}

export function backupName(path: string, at: Date): string {
  const extension = extname(path);
  const stamp = at.toISOString().slice(0, 23).replace(/:/g, "-");
  return join(dirname(path), `${basename(path, extension)}-${stamp}${extension}`);
}
