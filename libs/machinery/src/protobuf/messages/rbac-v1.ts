// Protobuf field tables for k8s.io/api/rbac/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const rbacV1: MessageTable = {
  AggregationRule: `1:clusterRoleSelectors:[]LabelSelector`,
  ClusterRole: `1:metadata:ObjectMeta 2:rules:[]PolicyRule 3:aggregationRule:AggregationRule`,
  ClusterRoleBinding: `1:metadata:ObjectMeta 2:subjects:[]Subject 3:roleRef:RoleRef`,
  PolicyRule: `1:verbs:[]string 2:apiGroups:[]string 3:resources:[]string 4:resourceNames:[]string
    5:nonResourceURLs:[]string`,
  Role: `1:metadata:ObjectMeta 2:rules:[]PolicyRule`,
  RoleBinding: `1:metadata:ObjectMeta 2:subjects:[]Subject 3:roleRef:RoleRef`,
  RoleRef: `1:apiGroup:!string 2:kind:!string 3:name:!string`,
  Subject: `1:kind:!string 2:apiGroup:string 3:name:!string 4:namespace:string`,
};
