// Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf), which kubectl and client-go
// typed clients send, into the JSON object the rest of the apiserver works with.
export {
  decodeKubernetesProtobuf,
  decodeKubernetesProtobufWithDiagnostics,
  hasKubernetesProtobufMagic,
  PROTOBUF_CONTENT_TYPE,
  type ProtobufDecodeResult,
  UnsupportedProtobufKindError,
} from "./decode.js";
export { protobufKinds } from "./kinds.js";
export { ProtobufDecodeError } from "./wire.js";
