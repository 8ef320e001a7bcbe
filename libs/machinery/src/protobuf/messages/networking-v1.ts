// Protobuf field tables for k8s.io/api/networking/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const networkingV1: MessageTable = {
  HTTPIngressPath: `1:path:string 3:pathType:?string 2:backend:IngressBackend`,
  HTTPIngressRuleValue: `1:paths:[]HTTPIngressPath`,
  Ingress: `1:metadata:ObjectMeta 2:spec:IngressSpec 3:status:IngressStatus`,
  IngressBackend: `4:service:IngressServiceBackend 3:resource:TypedLocalObjectReference`,
  IngressLoadBalancerIngress: `1:ip:string 2:hostname:string 4:ports:[]IngressPortStatus`,
  IngressLoadBalancerStatus: `1:ingress:[]IngressLoadBalancerIngress`,
  IngressPortStatus: `1:port:!int32 2:protocol:!string 3:error:?string`,
  IngressRule: `1:host:string 2:...:IngressRuleValue`,
  IngressRuleValue: `1:http:HTTPIngressRuleValue`,
  IngressServiceBackend: `1:name:!string 2:port:ServiceBackendPort`,
  IngressSpec: `4:ingressClassName:?string 1:defaultBackend:IngressBackend 2:tls:[]IngressTLS 3:rules:[]IngressRule`,
  IngressStatus: `1:loadBalancer:IngressLoadBalancerStatus`,
  IngressTLS: `1:hosts:[]string 2:secretName:string`,
  ServiceBackendPort: `1:name:string 2:number:int32`,
};
