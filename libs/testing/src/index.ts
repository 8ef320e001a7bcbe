export { freePort } from "./ports.js";
export { type NatsServer, natsServerBinary, startNatsServer } from "./nats.js";
