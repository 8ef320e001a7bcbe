// What cel-go and Kubernetes' CEL libraries charge (cel-go's common costs,
// k8s.io/apiserver/pkg/cel/library/cost.go), shared by the estimate at CRD create (cost-estimate.ts) and
// the count at run time (runtime-cost.ts), so that the two price alike.

/** cel-go's common.StringTraversalCostFactor: per byte of a string a call reads. */
export const STRING = 0.1;
/** cel-go's common.RegexStringLengthCostFactor: per byte of a regular expression. */
export const REGEX = 0.25;

/** cel-go's common.ListCreateBaseCost, MapCreateBaseCost, StructCreateBaseCost. */
export const LIST_CREATE = 10;
export const MAP_CREATE = 30;
export const STRUCT_CREATE = 40;

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
