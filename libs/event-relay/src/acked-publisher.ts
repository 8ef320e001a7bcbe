// JetStream publishes with their acks on one subscription, as the Go client's PublishAsync sends them:
// each message goes out as a plain publish whose reply subject is a token under this publisher's inbox,
// and the stream's ack (or refusal) comes back there. nats.js's `js.publish` makes a request of each
// message instead: a timer, a subscription entry and an Error object (made when the resolved request is
// cancelled) per message, about 4 % of the apiserver's time in a burst of pod writes.
import { type MsgHdrs, type NatsConnection, type Subscription, createInbox } from "nats";

/** One message to publish, with the JetStream message id that makes a re-publish a duplicate. */
export interface OutgoingMessage {
  subject: string;
  data: string;
  msgId: string;
  headers: MsgHdrs;
}

/** The stream refused a message, or nobody stored it (no stream on its subject: "no responders"). */
export class PublishError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly errCode?: number,
  ) {
    super(message);
  }
}

/** A publish call's messages: settled by the last ack, the first refusal or the timer. */
interface Batch {
  remaining: number;
  settle(error?: Error): void;
}

export class AckedPublisher {
  private readonly inbox: string;
  /** The batch each reply token belongs to, until its ack comes or the batch is settled. */
  private readonly waiting = new Map<string, Batch>();
  private readonly subscription: Subscription;
  private sent = 0;

  /** `inboxPrefix`: the connection's own (an identity may subscribe to its inbox only). */
  constructor(
    private readonly nc: NatsConnection,
    inboxPrefix?: string,
  ) {
    this.inbox = createInbox(inboxPrefix);
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      // An error here (the inbox refused by the bus's permissions) comes without a message: no ack will come.
      callback: (err, msg) => (err ? this.failAll(err) : this.acked(msg.subject, msg.data, msg.headers)),
    });
  }

  /**
   * Publishes the messages in order and resolves once the stream has stored every one (a duplicate counts:
   * it was stored before). Rejects on the first refusal, or when not every ack came within `timeoutMs`.
   */
  publish(messages: readonly OutgoingMessage[], timeoutMs: number): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const tokens: string[] = [];
      const batch: Batch = {
        remaining: messages.length,
        settle: (error) => {
          clearTimeout(timer);
          // Acks still to come for a failed batch are of no interest any more.
          for (const token of tokens) this.waiting.delete(token);
          if (error) reject(error);
          else resolve();
        },
      };
      const timer = setTimeout(() => batch.settle(new PublishError(`no ack within ${timeoutMs} ms`)), timeoutMs);
      try {
        for (const m of messages) {
          const token = `${this.inbox}.${++this.sent}`;
          tokens.push(token);
          this.waiting.set(token, batch);
          m.headers.set("Nats-Msg-Id", m.msgId);
          this.nc.publish(m.subject, m.data, { reply: token, headers: m.headers });
        }
      } catch (e) {
        // The connection is closed, or the message too large for it.
        batch.settle(e as Error);
      }
    });
  }

  /** Ends the subscription; publishes still waiting fail. */
  close(): void {
    this.subscription.unsubscribe();
    this.failAll(new PublishError("publisher closed"));
  }

  private failAll(error: Error): void {
    for (const batch of new Set(this.waiting.values())) batch.settle(error);
  }

  private acked(token: string, data: Uint8Array, headers: MsgHdrs | undefined): void {
    const batch = this.waiting.get(token);
    if (!batch) return;
    this.waiting.delete(token);
    const refusal = refusalOf(data, headers);
    if (refusal) batch.settle(refusal);
    else if (--batch.remaining === 0) batch.settle();
  }
}

/** Why the stream did not store a message, from its ack; undefined when it did. */
function refusalOf(data: Uint8Array, headers: MsgHdrs | undefined): PublishError | undefined {
  // A status message without a body: 503 when no stream listens on the subject.
  if (data.length === 0 && headers?.hasError) {
    return new PublishError(headers.code === 503 ? "no responders: no stream stores the subject" : headers.description, headers.code);
  }
  let ack: { error?: { code?: number; err_code?: number; description?: string } };
  try {
    ack = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8"));
  } catch {
    return new PublishError("unreadable ack");
  }
  return ack.error ? new PublishError(ack.error.description ?? "refused", ack.error.code, ack.error.err_code) : undefined;
}
