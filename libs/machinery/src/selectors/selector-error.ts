// A label or field selector that does not parse. The apiserver answers these with 400 BadRequest whose
// message is exactly `error.message`, so callers can tell them apart from programming errors.
export class SelectorError extends Error {
  override readonly name = "SelectorError";
}
