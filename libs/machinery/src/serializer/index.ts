export { DecodeError, MAX_NESTING_DEPTH, TooDeepError, decodeJson } from "./json.js";
export { duplicateFieldMessage, findDuplicateFields } from "./json-duplicates.js";
export { memberText } from "./json-members.js";
export { type DecodedYaml, decodeYaml } from "./yaml.js";
