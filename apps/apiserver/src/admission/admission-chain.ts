// The admission plugins the generic store calls, in kube-apiserver's order: mutating webhooks, then
// ValidatingAdmissionPolicies, then validating webhooks (MutatingAdmissionWebhook,
// ValidatingAdmissionPolicy, ValidatingAdmissionWebhook in its plugin list). Each answers for itself
// whether it has anything to do, so a kind with neither webhooks nor policies costs nothing.
import type { ObjectHeader } from "@orch/api";
import type { AdmissionAttributes, AdmissionHook, KindDefinition } from "@orch/registry";

export class AdmissionChain implements AdmissionHook {
  constructor(
    private readonly webhooks: AdmissionHook,
    private readonly policies: AdmissionHook,
  ) {}

  handles(kind: KindDefinition): boolean {
    return this.webhooks.handles(kind) || this.policies.handles(kind);
  }

  mutate(a: AdmissionAttributes): Promise<ObjectHeader | undefined> {
    return this.webhooks.handles(a.definition) ? this.webhooks.mutate(a) : Promise.resolve(a.object);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (this.policies.handles(a.definition)) await this.policies.validate(a);
    if (this.webhooks.handles(a.definition)) await this.webhooks.validate(a);
  }
}
