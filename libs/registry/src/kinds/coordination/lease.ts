// Lease (coordination.<domain>/v1): leader election for controllers. Kubernetes lets a Lease be
// created by a PUT (AllowCreateOnUpdate) and requires a positive lease duration.
import { Lease, type NamingProfile } from "@orch/api";
import { fieldError } from "@orch/machinery";
import type { KindDefinition, Strategy } from "../../generic/kind.js";
import { AGE, at, column, defineKind } from "../../generic/define.js";

const validate = (obj: Lease) => {
  const duration = obj.spec.leaseDurationSeconds;
  const transitions = obj.spec.leaseTransitions;
  const errs = [];
  if (duration !== undefined && duration <= 0) {
    errs.push(fieldError.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"));
  }
  if (transitions !== undefined && transitions < 0) {
    errs.push(fieldError.invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"));
  }
  return errs;
};

const strategy: Strategy<Lease> = { validate, validateUpdate: validate };

export const leases = (p: NamingProfile): KindDefinition =>
  defineKind({
    group: p.group("coordination"),
    version: "v1",
    kind: "Lease",
    plural: "leases",
    namespaced: true,
    schema: Lease,
    strategy,
    allowCreateOnUpdate: true,
    printerColumns: [column("Holder", "string", (o) => at(o, "spec.holderIdentity") ?? ""), AGE],
  });
