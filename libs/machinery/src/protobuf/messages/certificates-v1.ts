// Protobuf field tables for k8s.io/api/certificates/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const certificatesV1: MessageTable = {
  CertificateSigningRequest: `1:metadata:ObjectMeta 2:spec:CertificateSigningRequestSpec
    3:status:CertificateSigningRequestStatus`,
  CertificateSigningRequestCondition: `1:type:!string 6:status:!string 2:reason:string 3:message:string
    4:lastUpdateTime:Time 5:lastTransitionTime:Time`,
  CertificateSigningRequestSpec: `1:request:!bytes 7:signerName:!string 8:expirationSeconds:?int32 5:usages:[]string
    2:username:string 3:uid:string 4:groups:[]string 6:extra:map:[]string`,
  CertificateSigningRequestStatus: `1:conditions:[]CertificateSigningRequestCondition 2:certificate:bytes`,
};
