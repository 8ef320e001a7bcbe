export { methodNotAllowed } from "./errors.js";
export { handleResource } from "./handle.js";
export { type IncomingRequest, MAX_BODY_BYTES, type RequestHeaders, type ResourceDeps, type ResponseStream } from "./request.js";
