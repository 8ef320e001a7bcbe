// The naming controller (apiextensions-apiserver pkg/controller/status/naming_controller.go): a CRD's
// names are accepted unless another CRD of the same group already holds them. It writes
// `status.acceptedNames`, the NamesAccepted condition and, until the establishing controller takes
// over, Established False. One worker: deciding names is not safe to run concurrently.
import { type ApiClient, type ResourceRef, isConflict, isNotFound, revisionOf } from "@orch/client";
import { writeStatus } from "@orch/controller";
import { jsonEqual } from "@orch/machinery";
import { type Crd, type DesiredCondition, equivalent, findCondition, setCondition } from "./crd.js";

type Names = Crd["spec"]["names"];

/** The CRDs this controller knows: the informer's cache. */
export interface CrdSource {
  get(name: string): Crd | undefined;
  list(): Crd[];
}

/** Names compared as Go's semantic equality does (absent lists equal empty ones). */
const normalised = (names: Partial<Names> | undefined) => ({
  plural: names?.plural ?? "",
  singular: names?.singular ?? "",
  kind: names?.kind ?? "",
  listKind: names?.listKind ?? "",
  shortNames: names?.shortNames ?? [],
  categories: names?.categories ?? [],
});

const sameNames = (a: Partial<Names> | undefined, b: Partial<Names> | undefined) => jsonEqual(normalised(a), normalised(b));

const inUse = (name: string) => `${JSON.stringify(name)} is already in use`;

/** equalToAcceptedOrFresh: a name is ours if we hold it already or nobody does. */
function conflict(requested: string, accepted: string, used: Set<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return inUse(requested);
}

export class NamingController {
  /**
   * The CRDs this controller just wrote, until the informer shows them: deciding the next CRD's names
   * against a stale cache could hand the same name out twice (Kubernetes' crdMutationCache).
   */
  private readonly written = new Map<string, Crd>();

  constructor(
    private readonly client: Pick<ApiClient, "get" | "updateSubresource">,
    private readonly ref: ResourceRef,
    private readonly crds: CrdSource,
    /** Queues a CRD for another look (the others of a group, when names may have been freed). */
    private readonly requeue: (name: string) => void,
  ) {}

  private latest(name: string): Crd | undefined {
    const cached = this.crds.get(name);
    const written = this.written.get(name);
    if (!written) return cached;
    if (!cached || revisionOf(written) > revisionOf(cached)) return written;
    this.written.delete(name);
    return cached;
  }

  /** The names the group's CRDs hold already: resources (plural, singular, short) and kinds. */
  private namesInGroup(group: string): { resources: Set<string>; kinds: Set<string> } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const listed of this.crds.list()) {
      const crd = this.latest(listed.metadata!.name!) ?? listed;
      if (crd.spec.group !== group) continue;
      const accepted = normalised(crd.status?.acceptedNames);
      resources.add(accepted.plural).add(accepted.singular);
      for (const short of accepted.shortNames) resources.add(short);
      kinds.add(accepted.kind).add(accepted.listKind);
    }
    return { resources, kinds };
  }

  /** calculateNamesAndConditions: the names to accept and the NamesAccepted and Established conditions. */
  private decide(crd: Crd): { names: Names; namesAccepted: DesiredCondition; established: DesiredCondition } {
    const { resources, kinds } = this.namesInGroup(crd.spec.group);
    const requested = normalised(crd.spec.names);
    const accepted = normalised(crd.status?.acceptedNames);
    const names = { ...accepted };
    let failed: { reason: string; message: string } | undefined;
    const check = (reason: string, message: string | undefined, accept: () => void) => {
      if (message) failed = { reason, message };
      else accept();
    };
    check("PluralConflict", conflict(requested.plural, accepted.plural, resources), () => (names.plural = requested.plural));
    check("SingularConflict", conflict(requested.singular, accepted.singular, resources), () => (names.singular = requested.singular));
    if (!jsonEqual(requested.shortNames, accepted.shortNames)) {
      const held = new Set(accepted.shortNames);
      const errs = requested.shortNames
        // Our own accepted plural or singular is in the set too; a short name equal to it is no conflict.
        .filter((s) => !held.has(s) && s !== accepted.plural && s !== accepted.singular)
        .map((s) => conflict(s, "", resources))
        .filter((e): e is string => e !== undefined);
      // utilerrors.NewAggregate: one error reads as itself, several as a bracketed list.
      const message = errs.length === 0 ? undefined : errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`;
      check("ShortNamesConflict", message, () => (names.shortNames = requested.shortNames));
    }
    check("KindConflict", conflict(requested.kind, accepted.kind, kinds), () => (names.kind = requested.kind));
    check("ListKindConflict", conflict(requested.listKind, accepted.listKind, kinds), () => (names.listKind = requested.listKind));
    names.categories = requested.categories;

    const namesAccepted: DesiredCondition = failed
      ? { type: "NamesAccepted", status: "False", ...failed }
      : { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found" };
    // Established turns True only in the establishing controller, once the names are seen accepted.
    let established: DesiredCondition = findCondition(crd, "Established") ?? {
      type: "Established",
      status: "False",
      reason: "NotAccepted",
      message: "not all names are accepted",
    };
    if (established.status !== "True" && namesAccepted.status === "True") {
      established = { type: "Established", status: "False", reason: "Installing", message: "the initial names have been accepted" };
    }
    return { names: withoutEmpty(names), namesAccepted, established };
  }

  reconcile = async (name: string): Promise<void> => {
    const crd = this.latest(name);
    if (!crd) {
      // Deleted: its names are free; the group's other CRDs may now get theirs.
      this.requeueGroup(name);
      return;
    }
    const observed = crd.status?.observedGeneration === crd.metadata?.generation;
    if (sameNames(crd.spec.names, crd.status?.acceptedNames) && observed) return;
    const { names, namesAccepted, established } = this.decide(crd);
    if (sameNames(crd.status?.acceptedNames, names) && equivalent(namesAccepted, findCondition(crd, "NamesAccepted")) && observed) return;
    let updated: Crd;
    try {
      updated = await writeStatus(
        this.client,
        this.ref,
        crd,
        (copy) => {
          copy.status ??= {};
          copy.status.acceptedNames = names;
          setCondition(copy, namesAccepted);
          setCondition(copy, established);
          if (copy.metadata?.generation) copy.status.observedGeneration = copy.metadata.generation;
        },
        // A conflict means someone wrote meanwhile: the event of that write brings the CRD back.
        { attempts: 1 },
      );
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return;
      throw e;
    }
    this.written.set(name, updated);
    // Names we gave up may be what another CRD of the group waits for.
    this.requeueGroup(name);
  };

  private requeueGroup(name: string): void {
    const group = name.slice(name.indexOf(".") + 1);
    for (const other of this.crds.list()) {
      if (other.spec.group === group && other.metadata?.name !== name) this.requeue(other.metadata!.name!);
    }
  }
}

/** Optional names stay absent rather than empty, as Go's omitempty writes them. */
function withoutEmpty(names: ReturnType<typeof normalised>): Names {
  return {
    plural: names.plural,
    kind: names.kind,
    ...(names.singular ? { singular: names.singular } : {}),
    ...(names.listKind ? { listKind: names.listKind } : {}),
    ...(names.shortNames.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories.length ? { categories: names.categories } : {}),
  };
}
