export { freePort } from "./ports.js";
export { type NatsServer, type NatsServerOptions, natsServerBinary, startNatsServer } from "./nats.js";
export { type ApiserverProcess, type ApiserverProcessOptions, apiserverBundle, startApiserverProcess } from "./apiserver.js";
export { type EventuallyOptions, eventually } from "./eventually.js";
export {
  type PostgresDatabase,
  type PostgresDatabaseOptions,
  createPostgresDatabase,
  postgresAdminUrl,
  postgresAvailable,
} from "./postgres.js";
export { type AppProcess, appBundle, startAppProcess } from "./app-process.js";
