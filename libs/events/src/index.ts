export * from "./subjects.js";
export * from "./stream.js";
