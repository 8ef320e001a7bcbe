// Slow clients (slowloris): a connection that never finishes its TLS handshake or its request headers is
// closed after the header timeout, and while many of them are open everyone else is served.
import { eventually } from "@orch/testing";
import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, expect, it } from "vitest";
import { useTestServer } from "./harness.js";

const t = useTestServer({ headerTimeoutMs: 1000 });
const open: Socket[] = [];
afterAll(() => {
  for (const s of open) s.destroy();
});

const closed = (socket: Socket) => new Promise<void>((resolve) => socket.once("close", () => resolve()));

/** A connection that completes TLS, then sends half a request and nothing more. */
async function dribbling(): Promise<Socket> {
  const socket = tlsConnect({ host: "127.0.0.1", port: t.server.port, rejectUnauthorized: false });
  socket.on("error", () => undefined).resume(); // reads the server's answer (a 408) and its close
  await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
  socket.write("GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  open.push(socket);
  return socket;
}

it("closes a connection whose request headers do not arrive in time", async () => {
  const socket = await dribbling();
  const started = Date.now();
  await closed(socket);
  // Closed by the timeout, not at once: the first bytes were taken.
  expect(Date.now() - started).toBeGreaterThanOrEqual(900);
});

it("closes a connection that never starts its TLS handshake", async () => {
  const socket = tcpConnect(t.server.port, "127.0.0.1");
  socket.on("error", () => undefined).resume();
  open.push(socket);
  await closed(socket);
});

it("serves other clients while 500 slow connections are open", async () => {
  const slow = await Promise.all(Array.from({ length: 500 }, dribbling));
  for (let i = 0; i < 20; i++) expect((await t.api.get("/api/v1/namespaces/default")).status).toBe(200);
  // And they all go in the end.
  await eventually("the slow connections to be closed", () => slow.every((s) => s.destroyed || s.closed), { timeoutMs: 15_000 });
});

it("keeps an idle kept-alive connection open past Node's 5 s default, as Kubernetes keeps it 90 s", async () => {
  const socket = tlsConnect({ host: "127.0.0.1", port: t.server.port, rejectUnauthorized: false });
  open.push(socket);
  let received = "";
  socket.on("data", (chunk) => (received += chunk.toString("latin1")));
  await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
  const ask = async (answers: number) => {
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await eventually("the answer", () => received.split("HTTP/1.1 200").length - 1 === answers);
  };
  await ask(1);
  // Longer than both the header timeout (1 s here) and Node's default keep-alive timeout.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  expect(socket.destroyed).toBe(false);
  await ask(2);
});
