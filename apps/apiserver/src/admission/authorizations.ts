// The answers admission CEL's `authorizer` gets (Kubernetes' caching authorizer of one request): the
// request's authorizer asked on the user's behalf, or on a service account's. CEL evaluates
// synchronously, so an evaluation records the questions it cannot answer yet; `evaluateAuthorized`
// answers them and evaluates again until nothing is pending.
import type { AuthorizationAnswer, AuthorizationAnswers, AuthorizationQuestion, RequestContext, UserInfo } from "@orch/registry";

/** Evaluations of one request that need more answers than this are left with the pending error. */
const MAX_ROUNDS = 8;

class RequestAuthorizations implements AuthorizationAnswers {
  private readonly known = new Map<string, AuthorizationAnswer>();
  readonly pending = new Map<string, AuthorizationQuestion>();

  constructor(private readonly ctx: RequestContext) {}

  decide(question: AuthorizationQuestion): AuthorizationAnswer | undefined {
    const key = JSON.stringify(question);
    const answer = this.known.get(key);
    if (!answer) this.pending.set(key, question);
    return answer;
  }

  async answerPending(): Promise<void> {
    const questions = [...this.pending];
    this.pending.clear();
    await Promise.all(questions.map(async ([key, q]) => this.known.set(key, await this.ask(q))));
  }

  private async ask(q: AuthorizationQuestion): Promise<AuthorizationAnswer> {
    const authorizer = this.ctx.authorizer;
    // The apiserver's own requests act as system:masters.
    if (!authorizer) return { allowed: true, reason: "" };
    const user: UserInfo = q.serviceAccount
      ? {
          username: `system:serviceaccount:${q.serviceAccount.namespace}:${q.serviceAccount.name}`,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${q.serviceAccount.namespace}`],
        }
      : this.ctx.user;
    try {
      const decision = await authorizer.authorize(
        q.resourceRequest
          ? {
              user,
              verb: q.verb,
              resourceRequest: true,
              namespace: q.namespace,
              apiGroup: q.group,
              apiVersion: "*",
              resource: q.resource,
              subresource: q.subresource,
              name: q.name,
            }
          : { user, verb: q.verb, resourceRequest: false, path: q.path },
      );
      return { allowed: decision.allowed, reason: decision.reason };
    } catch (e) {
      return { allowed: false, reason: "", error: (e as Error).message };
    }
  }
}

const byRequest = new WeakMap<RequestContext, RequestAuthorizations>();

/** The answers of this request, shared by every webhook condition and policy it meets. */
export function authorizationsOf(ctx: RequestContext): RequestAuthorizations {
  let answers = byRequest.get(ctx);
  if (!answers) byRequest.set(ctx, (answers = new RequestAuthorizations(ctx)));
  return answers;
}

/** Runs `evaluate` until it asked nothing it could not answer (or MAX_ROUNDS), answering in between. */
export async function evaluateAuthorized<T>(ctx: RequestContext, evaluate: () => T): Promise<T> {
  const answers = authorizationsOf(ctx);
  for (let round = 1; ; round++) {
    const result = evaluate();
    if (answers.pending.size === 0 || round === MAX_ROUNDS) return result;
    await answers.answerPending();
  }
}
