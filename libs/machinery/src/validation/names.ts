// Name and label syntax checks with Kubernetes' own messages (k8s.io/apimachinery v0.36:
// pkg/util/validation and pkg/api/validate/content). Each returns the list of broken rules; empty means valid.
//
// Kubernetes is mid-migration between two copies of these checks and their "too long" texts differ:
// util/validation says "must be no more than N characters" (DNS names, namespaces), while the newer
// content package says "must be no more than N bytes" (label keys, label values, a label key's prefix).
// Both count bytes. We reproduce whichever copy Kubernetes calls at each site.

type LengthUnit = "bytes" | "characters";

const maxLenError = (length: number, unit: LengthUnit) => `must be no more than ${length} ${unit}`;
const emptyError = () => "must be non-empty";

/** validation.RegexError, including its odd `',  or '` spacing, which clients see verbatim. */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  let s = `${msg} (e.g. `;
  examples.forEach((example, i) => {
    if (i > 0) s += " or ";
    s += `'${example}', `;
  });
  return `${s}regex used for validation is '${re}')`;
}

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelMaxLength = 63;
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainMaxLength = 253;
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelMaxLength = 63;
const dns1035LabelRegexp = new RegExp(`^${dns1035LabelFmt}$`);

/** IsDNS1123Label: e.g. namespace names. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > dns1123LabelMaxLength) errs.push(maxLenError(dns1123LabelMaxLength, "characters"));
  if (!dns1123LabelRegexp.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    if (dns1123SubdomainRegexp.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"));
  }
  return errs;
}

function dns1123SubdomainErrors(value: string, unit: LengthUnit): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength, unit));
  if (!dns1123SubdomainRegexp.test(value)) {
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"));
  }
  return errs;
}

/** IsDNS1123Subdomain: the default rule for object names. */
export const isDNS1123Subdomain = (value: string): string[] => dns1123SubdomainErrors(value, "characters");

/** IsDNS1035Label: e.g. service names. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > dns1035LabelMaxLength) errs.push(maxLenError(dns1035LabelMaxLength, "characters"));
  if (!dns1035LabelRegexp.test(value)) {
    errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"));
  }
  return errs;
}

const labelKeyFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const labelKeyErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelKeyMaxLength = 63;
const labelKeyRegexp = new RegExp(`^${labelKeyFmt}$`);

/**
 * IsQualifiedName (content.IsLabelKey): label keys, annotation keys, finalizers — an optional DNS
 * subdomain prefix and `/`, then a name of at most 63 bytes.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = value;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else for (const msg of dns1123SubdomainErrors(prefix, "bytes")) errs.push(`prefix part ${msg}`);
  } else {
    errs.push(
      `a valid label key ${regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    );
    return errs;
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (Buffer.byteLength(name) > labelKeyMaxLength) errs.push(`name part ${maxLenError(labelKeyMaxLength, "bytes")}`);
  if (!labelKeyRegexp.test(name)) {
    errs.push(`name part ${regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")}`);
  }
  return errs;
}

const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueMaxLength = 63;
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);

/** IsValidLabelValue (content.IsLabelValue): empty, or at most 63 bytes of `[-A-Za-z0-9_.]`. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value) > labelValueMaxLength) errs.push(maxLenError(labelValueMaxLength, "bytes"));
  if (!labelValueRegexp.test(value)) {
    errs.push(regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"));
  }
  return errs;
}

/**
 * path.IsValidPathSegmentPrefix: no `/` or `%`, since the name becomes one URL path segment and one
 * storage key segment. Like Kubernetes, it accepts the empty string and any length.
 */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const illegal of ["/", "%"]) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

/** path.IsValidPathSegmentName: a prefix that is also not `.` or `..`. */
export function isValidPathSegmentName(name: string): string[] {
  for (const illegal of [".", ".."]) if (name === illegal) return [`may not be '${illegal}'`];
  return isValidPathSegmentPrefix(name);
}

/**
 * ValidateNameFunc: `prefix` is true when validating a generateName, to which random characters will be
 * appended, so a trailing dash is acceptable there.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

/**
 * maskTrailingDash, bug for bug: Kubernetes drops the last two characters and appends "a", so the
 * character before a trailing dash is never checked.
 */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith("-") ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
/** ValidatePathSegmentName: what the generic registry checks every name against. */
export const nameIsPathSegment: NameValidator = (name, prefix) => (prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name));
/** Namespace names are DNS labels. */
export const validateNamespaceName: NameValidator = nameIsDNSLabel;
