// The kinds whose protobuf bodies we decode, by apiVersion. The root message of each is named after its kind.
// The list follows what kubectl 1.32 sends as protobuf: `create namespace|serviceaccount|secret|configmap|
// deployment|service|quota|role|clusterrole|rolebinding|clusterrolebinding|job|cronjob|ingress|pdb|priorityclass`,
// `create token`, `auth whoami`, `auth can-i [--list]`, `certificate approve|deny`, `debug --copy-to` (a Pod),
// plus what client-go programs commonly write: the review kinds, core/v1 Events (record.EventRecorder) and Leases
// (leader election).
import { appsV1 } from "./messages/apps-v1.js";
import { authenticationV1 } from "./messages/authentication-v1.js";
import { authorizationV1 } from "./messages/authorization-v1.js";
import { batchV1 } from "./messages/batch-v1.js";
import { certificatesV1 } from "./messages/certificates-v1.js";
import { coordinationV1 } from "./messages/coordination-v1.js";
import { coreV1 } from "./messages/core-v1.js";
import { metaV1 } from "./messages/meta-v1.js";
import { networkingV1 } from "./messages/networking-v1.js";
import { policyV1 } from "./messages/policy-v1.js";
import { rbacV1 } from "./messages/rbac-v1.js";
import { schedulingV1 } from "./messages/scheduling-v1.js";
import type { MessageTable } from "./schema.js";

export const protobufKinds: Readonly<Record<string, readonly string[]>> = {
  v1: ["ConfigMap", "Event", "Namespace", "Pod", "ResourceQuota", "Secret", "Service", "ServiceAccount"],
  "apps/v1": ["Deployment"],
  "authentication.k8s.io/v1": ["SelfSubjectReview", "TokenRequest", "TokenReview"],
  "authorization.k8s.io/v1": ["LocalSubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"],
  "batch/v1": ["CronJob", "Job"],
  "certificates.k8s.io/v1": ["CertificateSigningRequest"],
  "coordination.k8s.io/v1": ["Lease"],
  "networking.k8s.io/v1": ["Ingress"],
  "policy/v1": ["PodDisruptionBudget"],
  "rbac.authorization.k8s.io/v1": ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
  "scheduling.k8s.io/v1": ["PriorityClass"],
};

export const messageTables: readonly MessageTable[] = [
  metaV1,
  coreV1,
  appsV1,
  authenticationV1,
  authorizationV1,
  batchV1,
  certificatesV1,
  coordinationV1,
  networkingV1,
  policyV1,
  rbacV1,
  schedulingV1,
];
