import { failure } from "@orch/machinery";

/** What Kubernetes answers for a method it installed no route for. */
export const methodNotAllowed = () =>
  failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {});
