export { type BusConnection, busConnectionFromEnv, commonName, inboxPrefixFor, natsConnectOptions } from "./connection.js";
export {
  ALL_EVENTS,
  type BusUser,
  type NatsPermissions,
  PUBLISHER_PERMISSIONS,
  authorizationConfig,
  certificateSubject,
  consumerPermissions,
  watchableSubjects,
} from "./permissions.js";
