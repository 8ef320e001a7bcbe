// Pod priority at admission, as Kubernetes' Priority admission plugin (plugin/pkg/admission/priority)
// does for pods: on create, `spec.priorityClassName` resolves to `spec.priority` and
// `spec.preemptionPolicy` from its PriorityClass (no name: the global default class, else priority 0);
// an unknown class, or a priority or policy in the pod that disagrees with the class, is a 403. On
// update, a priority or policy the request left out is kept from the stored pod.
import type { NamingProfile, ObjectHeader, Pod } from "@orch/api";
import { forbiddenByAdmission } from "../../generic/admission.js";
import type { ClusterReader } from "../../generic/kind.js";

/** scheduling.DefaultPriorityWhenNoDefaultClassExists. */
const DEFAULT_PRIORITY = 0;

interface ClassFields {
  value?: number;
  globalDefault?: boolean;
  preemptionPolicy?: string;
}
const fields = (o: ObjectHeader) => o as ObjectHeader & ClassFields;

/** getDefaultPriorityClass: of several defaults (a race), the lowest-valued one. */
async function defaultClass(cluster: ClusterReader, group: string): Promise<(ObjectHeader & ClassFields) | undefined> {
  let found: (ObjectHeader & ClassFields) | undefined;
  for (const pc of (await cluster.list(group, "priorityclasses")).map(fields)) {
    if (pc.globalDefault !== true) continue;
    if (!found || (found.value ?? 0) > (pc.value ?? 0)) found = pc;
  }
  return found;
}

/** On update: a priority or policy the request left out is kept from the stored pod (API validation refuses any other change). */
export function keepPriorityOnUpdate(pod: Pod, old: Pod): void {
  const spec = pod.spec;
  if (!spec) return;
  if (spec.priority === undefined && old.spec?.priority !== undefined) spec.priority = old.spec.priority;
  if (spec.preemptionPolicy === undefined && old.spec?.preemptionPolicy !== undefined) spec.preemptionPolicy = old.spec.preemptionPolicy;
}

/** On create: the priority and preemption policy from the pod's class, or the default class. */
export const admitPodPriority =
  (profile: NamingProfile) =>
  async (pod: Pod, cluster: ClusterReader): Promise<void> => {
    const spec = pod.spec;
    if (!spec) return;
    const schedulingGroup = profile.group("scheduling");
    const forbidden = (why: string) => forbiddenByAdmission({ group: "", resource: "pods" }, pod, why);
    let priority = DEFAULT_PRIORITY;
    let policy: string | undefined;
    if (!spec.priorityClassName) {
      const pc = await defaultClass(cluster, schedulingGroup);
      if (pc) {
        spec.priorityClassName = pc.metadata.name;
        priority = pc.value ?? DEFAULT_PRIORITY;
        policy = pc.preemptionPolicy;
      }
    } else {
      const found = await cluster.get(schedulingGroup, "priorityclasses", "", spec.priorityClassName);
      if (!found) throw forbidden(`no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = fields(found).value ?? DEFAULT_PRIORITY;
      policy = fields(found).preemptionPolicy;
    }
    if (spec.priority !== undefined && spec.priority !== priority) {
      throw forbidden(
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (policy !== undefined) {
      if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== policy) {
        throw forbidden(
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
  };
