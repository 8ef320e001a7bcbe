// Kubernetes' CEL authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go): `authorizer`, and
// `authorizer.requestResource` (a field here), with path, group, resource, subresource, namespace,
// name, fieldSelector, labelSelector, serviceAccount, check(verb) and the decision's allowed, reason,
// errored and error.
//
// CEL evaluates synchronously; an apiserver's authorizer may answer asynchronously. So a check asks
// the evaluation's `AuthorizationAnswers` and, when the answer is not known yet, records the question
// and fails the evaluation with AuthorizationPending: the caller answers the recorded questions and
// evaluates again (CEL is pure, so the second evaluation takes the same path up to the known answers).
import type { Environment } from "@marcbachmann/cel-js";
import { isDNS1123Label, isDNS1123Subdomain } from "@orch/machinery";

/** One access question, as Kubernetes' authorizer.AttributesRecord (the user's is the request's unless a service account's). */
export type AuthorizationQuestion = {
  verb: string;
  /** Set when `authorizer.serviceAccount(namespace, name)` asked on a service account's behalf. */
  serviceAccount?: { namespace: string; name: string };
} & (
  | {
      resourceRequest: true;
      group: string;
      resource: string;
      subresource: string;
      namespace: string;
      name: string;
      fieldSelector: string;
      labelSelector: string;
    }
  | { resourceRequest: false; path: string }
);

export interface AuthorizationAnswer {
  allowed: boolean;
  reason: string;
  /** Set when the authorizer failed to decide. */
  error?: string;
}

/** What an evaluation knows of the answers; `decide` records what it does not know yet. */
export interface AuthorizationAnswers {
  decide(question: AuthorizationQuestion): AuthorizationAnswer | undefined;
}

/** An evaluation needs answers it does not have yet: answer them and evaluate again. */
export class AuthorizationPending extends Error {
  constructor() {
    super("authorization decisions pending");
  }
}

export class AuthorizerValue {
  /** `authorizer.requestResource`: the request's own resource (group, resource, subresource, namespace, name). */
  requestResource: ResourceCheckValue | undefined;

  constructor(
    readonly answers: AuthorizationAnswers,
    readonly serviceAccount: { namespace: string; name: string } | undefined,
  ) {}
}

export class PathCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}

export class GroupCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}

export class ResourceCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
    readonly resource: string,
    readonly subresource = "",
    readonly namespace = "",
    readonly name = "",
    readonly fieldSelector = "",
    readonly labelSelector = "",
  ) {}

  with(change: Partial<Pick<ResourceCheckValue, "subresource" | "namespace" | "name" | "fieldSelector" | "labelSelector">>) {
    const next = { ...this, ...change };
    return new ResourceCheckValue(
      this.authorizer,
      this.group,
      this.resource,
      next.subresource,
      next.namespace,
      next.name,
      next.fieldSelector,
      next.labelSelector,
    );
  }
}

export class DecisionValue {
  constructor(readonly answer: AuthorizationAnswer) {}
}

/** The authorizer of one evaluation: the request's user's, with `requestResource` the request's own resource. */
export function authorizerFor(
  answers: AuthorizationAnswers,
  request: { group: string; resource: string; subresource: string; namespace: string; name: string },
): AuthorizerValue {
  const authorizer = new AuthorizerValue(answers, undefined);
  authorizer.requestResource = new ResourceCheckValue(
    authorizer,
    request.group,
    request.resource,
    request.subresource,
    request.namespace,
    request.name,
  );
  return authorizer;
}

function decide(authorizer: AuthorizerValue, question: AuthorizationQuestion): DecisionValue {
  const full = authorizer.serviceAccount ? { ...question, serviceAccount: authorizer.serviceAccount } : question;
  const answer = authorizer.answers.decide(full);
  if (!answer) throw new AuthorizationPending();
  return new DecisionValue(answer);
}

const A = "kubernetes.authorization.Authorizer";
const P = "kubernetes.authorization.PathCheck";
const G = "kubernetes.authorization.GroupCheck";
const R = "kubernetes.authorization.ResourceCheck";
const D = "kubernetes.authorization.Decision";

/** The library's types and functions; `authorizer` itself is the environment's to declare. */
export function registerAuthorizerLibrary(env: Environment): Environment {
  return env
    .registerType(P, PathCheckValue)
    .registerType(G, GroupCheckValue)
    .registerType(R, ResourceCheckValue)
    .registerType(D, DecisionValue)
    .registerType(A, { ctor: AuthorizerValue, fields: { requestResource: R } })
    .registerFunction(`${A}.path(string): ${P}`, (a: AuthorizerValue, path: string) => {
      if (path.trim() === "") throw new Error("path must not be empty");
      return new PathCheckValue(a, path);
    })
    .registerFunction(`${A}.group(string): ${G}`, (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group))
    .registerFunction(`${A}.serviceAccount(string, string): ${A}`, (a: AuthorizerValue, namespace: string, name: string) => {
      if (isDNS1123Subdomain(name).length > 0) throw new Error("Invalid service account name");
      if (isDNS1123Label(namespace).length > 0) throw new Error("Invalid service account namespace");
      return new AuthorizerValue(a.answers, { namespace, name });
    })
    .registerFunction(`${G}.resource(string): ${R}`, (g: GroupCheckValue, resource: string) => {
      if (resource.trim() === "") throw new Error("resource must not be empty");
      return new ResourceCheckValue(g.authorizer, g.group, resource);
    })
    .registerFunction(`${R}.subresource(string): ${R}`, (r: ResourceCheckValue, subresource: string) => r.with({ subresource }))
    .registerFunction(`${R}.namespace(string): ${R}`, (r: ResourceCheckValue, namespace: string) => r.with({ namespace }))
    .registerFunction(`${R}.name(string): ${R}`, (r: ResourceCheckValue, name: string) => r.with({ name }))
    .registerFunction(`${R}.fieldSelector(string): ${R}`, (r: ResourceCheckValue, fieldSelector: string) => r.with({ fieldSelector }))
    .registerFunction(`${R}.labelSelector(string): ${R}`, (r: ResourceCheckValue, labelSelector: string) => r.with({ labelSelector }))
    .registerFunction(`${P}.check(string): ${D}`, (p: PathCheckValue, verb: string) =>
      decide(p.authorizer, { resourceRequest: false, path: p.path, verb }),
    )
    .registerFunction(`${R}.check(string): ${D}`, (r: ResourceCheckValue, verb: string) =>
      decide(r.authorizer, {
        resourceRequest: true,
        group: r.group,
        resource: r.resource,
        subresource: r.subresource,
        namespace: r.namespace,
        name: r.name,
        fieldSelector: r.fieldSelector,
        labelSelector: r.labelSelector,
        verb,
      }),
    )
    .registerFunction(`${D}.allowed(): bool`, (d: DecisionValue) => d.answer.allowed)
    .registerFunction(`${D}.reason(): string`, (d: DecisionValue) => d.answer.reason)
    .registerFunction(`${D}.errored(): bool`, (d: DecisionValue) => d.answer.error !== undefined)
    .registerFunction(`${D}.error(): string`, (d: DecisionValue) => d.answer.error ?? "");
}

export { A as AUTHORIZER_TYPE };
