// The ceiling orch is compared with: the least a Hono + better-sqlite3 server over the same HTTPS
// setup can do per create (parse, stamp, insert) and per get (select, send the stored text).
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import { Hono } from "hono";
import { randomUUID } from "node:crypto";
import { createServer } from "node:https";

export function runBaselineServer(dbPath: string, tls: { key: string; cert: string; ca: string }): void {
  const db = new Database(dbPath);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS items (name TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO items (name, value) VALUES (?, ?)");
  const select = db.prepare("SELECT value FROM items WHERE name = ?").pluck();
  const app = new Hono();
  app.post("/items", async (c) => {
    const obj = (await c.req.json()) as { metadata: { name: string; uid?: string; creationTimestamp?: string } };
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString();
    const text = JSON.stringify(obj);
    insert.run(obj.metadata.name, text);
    return c.body(text, 201, { "Content-Type": "application/json" });
  });
  app.get("/items/:name", (c) => {
    const value = select.get(c.req.param("name")) as string | undefined;
    return value ? c.body(value, 200, { "Content-Type": "application/json" }) : c.body("{}", 404);
  });
  const server = serve({
    fetch: app.fetch,
    port: 0,
    hostname: "127.0.0.1",
    createServer,
    serverOptions: { ...tls, requestCert: true, rejectUnauthorized: false },
  });
  server.once("listening", () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
}
