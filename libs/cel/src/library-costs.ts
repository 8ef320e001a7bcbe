// What Kubernetes' CEL libraries charge (k8s.io/apiserver/pkg/cel/library/cost.go, and the cel-go
// factors it uses), shared by the estimate at CRD create (cost-estimate.ts) and the count at run time
// (runtime-cost.ts), so that the two price a call alike.

/** cel-go's common.StringTraversalCostFactor: per byte of a string a call reads. */
export const STRING = 0.1;
/** cel-go's common.RegexStringLengthCostFactor: per byte of a regular expression. */
export const REGEX = 0.25;

/** Calls Kubernetes prices at 1, whatever their arguments. */
export const UNIT_COST_CALLS: ReadonlySet<string> = new Set([
  "format.named",
  "sign",
  "asInteger",
  "isInteger",
  "asApproximateFloat",
  "isGreaterThan",
  "isLessThan",
  "compareTo",
  "add",
  "sub",
  "getScheme",
  "getHostname",
  "getHost",
  "getPort",
  "getEscapedPath",
  "getQuery",
  "masked",
  "prefixLength",
  "family",
  "isUnspecified",
  "isLoopback",
  "isLinkLocalMulticast",
  "isLinkLocalUnicast",
  "isGlobalUnicast",
]);
