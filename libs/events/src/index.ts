export * from "./subjects.js";
export * from "./relay.js";
