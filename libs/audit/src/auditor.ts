// Auditing as the apiserver uses it: a policy checker and a sink, and the start of each request's record.
import { PolicyChecker, type RequestAttributes } from "./checker.js";
import { type AuditSink, type AuditedRequest, RequestAudit } from "./event.js";
import { type LogBackendOptions, openLogBackend } from "./log-backend.js";
import { type Policy, loadPolicyFile } from "./policy.js";

export class Auditor {
  private readonly checker: PolicyChecker;

  constructor(
    policy: Policy,
    readonly sink: AuditSink,
  ) {
    this.checker = new PolicyChecker(policy);
  }

  /** The record of a request the policy audits; undefined when its level is None. */
  begin(attributes: RequestAttributes, request: AuditedRequest): RequestAudit | undefined {
    const config = this.checker.evaluate(attributes);
    return config.level === "None" ? undefined : new RequestAudit(this.sink, config, request);
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}

export interface AuditSettings extends Omit<LogBackendOptions, "path"> {
  policyFile: string;
  logPath: string;
  /**
   * Opens where the events go; default the log backend itself. (A process serving from several threads
   * gives its other threads a sink that hands their events to the thread writing the file.)
   */
  openSink?: (options: LogBackendOptions) => Promise<AuditSink>;
}

/** Loads the policy (a `PolicyError` if it is unusable) and opens the log. */
export async function startAuditor(settings: AuditSettings): Promise<Auditor> {
  const policy = await loadPolicyFile(settings.policyFile);
  const { policyFile: _policy, logPath, openSink = openLogBackend, ...log } = settings;
  return new Auditor(policy, await openSink({ ...log, path: logPath }));
}
