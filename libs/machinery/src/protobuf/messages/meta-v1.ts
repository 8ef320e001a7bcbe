// Protobuf field tables for k8s.io/apimachinery/pkg/apis/meta/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const metaV1: MessageTable = {
  Condition: `1:type:!string 2:status:!string 3:observedGeneration:int64 4:lastTransitionTime:Time 5:reason:!string
    6:message:!string`,
  FieldSelectorRequirement: `1:key:!string 2:operator:!string 3:values:[]string`,
  LabelSelector: `1:matchLabels:map:string 2:matchExpressions:[]LabelSelectorRequirement`,
  LabelSelectorRequirement: `1:key:!string 2:operator:!string 3:values:[]string`,
  ManagedFieldsEntry: `1:manager:string 2:operation:string 3:apiVersion:string 4:time:Time 6:fieldsType:string
    7:fieldsV1:JSON 8:subresource:string`,
  ObjectMeta: `1:name:string 2:generateName:string 3:namespace:string 4:selfLink:string 5:uid:string
    6:resourceVersion:string 7:generation:int64 8:creationTimestamp:Time 9:deletionTimestamp:Time
    10:deletionGracePeriodSeconds:?int64 11:labels:map:string 12:annotations:map:string
    13:ownerReferences:[]OwnerReference 14:finalizers:[]string 17:managedFields:[]ManagedFieldsEntry`,
  OwnerReference: `5:apiVersion:!string 1:kind:!string 3:name:!string 4:uid:!string 6:controller:?bool
    7:blockOwnerDeletion:?bool`,
};
