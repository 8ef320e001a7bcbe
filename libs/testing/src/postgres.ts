// Throwaway PostgreSQL databases on the machine's server (127.0.0.1:5432, user postgres, trust auth), one
// per test or test file, so tests never share state and can run in parallel. A test drops only the
// database it created, and so ends only connections to that database.
import { randomBytes } from "node:crypto";
import pg from "pg";

/** The server's maintenance database, from which test databases are created and dropped. */
export const postgresAdminUrl = process.env.ORCH_TEST_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";

export interface PostgresDatabase {
  /** `postgres://…/<name>`: what ORCH_STORAGE or PostgresStorage takes. */
  url: string;
  name: string;
  /** Drops the database, ending connections to it that are still open (all of them this test's). */
  drop(): Promise<void>;
}

async function withAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * Whether tests can use PostgreSQL. Unreachable: in CI (CI=true) an error, since a suite that quietly
 * skips proves nothing; on a developer's machine a warning and false, so the caller skips.
 */
export async function postgresAvailable(): Promise<boolean> {
  try {
    await withAdmin((client) => client.query("SELECT 1"));
    return true;
  } catch (e) {
    const message = `PostgreSQL is not reachable at ${postgresAdminUrl.replace(/\/\/[^@]*@/, "//")} (${(e as Error).message}); set ORCH_TEST_POSTGRES_URL or start PostgreSQL`;
    if (process.env.CI && process.env.CI !== "false") throw new Error(message);
    console.warn(`${message}: skipping the PostgreSQL tests`);
    return false;
  }
}

export interface PostgresDatabaseOptions {
  /**
   * Whether a commit waits for its WAL to reach the disk (`synchronous_commit`). Off by default: tests
   * check what commits do, not that the disk keeps them, and a flush per commit (~3 ms here) would make
   * a suite of sequential writes several times slower. On for a test of durability or a benchmark.
   */
  durable?: boolean;
}

/** A new, empty database with a unique name. */
export async function createPostgresDatabase(options: PostgresDatabaseOptions = {}): Promise<PostgresDatabase> {
  const name = `orch_test_${process.pid}_${randomBytes(6).toString("hex")}`;
  await withAdmin(async (client) => {
    await client.query(`CREATE DATABASE ${name}`);
    if (!options.durable) await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
