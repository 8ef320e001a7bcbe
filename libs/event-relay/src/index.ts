export * from "./relay.js";
