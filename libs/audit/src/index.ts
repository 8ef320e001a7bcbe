// @orch/audit: Kubernetes' audit logging — the audit.k8s.io/v1 Policy (which requests are recorded, and
// how much of them), the audit.k8s.io/v1 Event written at each stage of a request, and the log backend.
// The apiserver's filters (apps/apiserver/src/http/audit.ts) feed it.
export { Auditor, type AuditSettings, startAuditor } from "./auditor.js";
export { PolicyChecker, type RequestAttributes, type RequestAuditConfig } from "./checker.js";
export {
  type AuditEvent,
  type AuditSink,
  type AuditUser,
  type AuditedRequest,
  DECISION_ANNOTATION,
  type ObjectReference,
  REASON_ANNOTATION,
  RequestAudit,
  type ResponseStatus,
  auditUser,
  levelAtLeast,
  microTime,
  preciseNow,
  sourceIPs,
  truncateUserAgent,
  withoutManagedFields,
} from "./event.js";
export { type LogBackendOptions, backupName, openLogBackend } from "./log-backend.js";
export {
  AUDIT_API_VERSION,
  LEVELS,
  type Level,
  type Policy,
  PolicyError,
  type PolicyRule,
  STAGES,
  type Stage,
  loadPolicyFile,
  parsePolicy,
} from "./policy.js";
