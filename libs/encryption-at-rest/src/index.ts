export {
  type EncryptionConfiguration,
  EncryptionConfigurationError,
  parseEncryptionConfiguration,
  validateEncryptionConfiguration,
} from "./configuration.js";
export { AESCBC_PREFIX, AESGCM_PREFIX, loadEncryptionConfiguration, valueTransformers } from "./transformers.js";
export { DEFAULT_CONFIGURATION_FILE, ensureDefaultEncryptionConfiguration } from "./default-configuration.js";
