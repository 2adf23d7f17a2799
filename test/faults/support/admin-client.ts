import { z } from 'zod';
import { FaultSuiteError } from './fault-suite-error.js';

/**
 * The emulator's admin API (/_emulator/, docs/emulator.md) over HTTP, for an emulator that runs as
 * its own process. Only the fields the suite reads are validated (zod, loose objects): a change in
 * the emulator that drops one of them fails loudly here instead of counting zeros.
 */
const MessageSchema = z.looseObject({
  id: z.number(),
  messageId: z.string(),
  conversationId: z.string(),
  origin: z.enum(['customer', 'ai', 'agent', 'api', 'note']),
  text: z.string(),
  caption: z.string(),
  type: z.string(),
  sentAtIso: z.string(),
  deliveryStatus: z.string(),
  isNote: z.boolean(),
});
export type AdminMessage = z.infer<typeof MessageSchema>;

const ConversationViewSchema = z.looseObject({
  id: z.string(),
  needHuman: z.boolean(),
  status: z.string(),
  lastCustomerMessageAt: z.string().nullable(),
  messageCount: z.number(),
  lastMessage: MessageSchema.nullable(),
});
export type AdminConversationView = z.infer<typeof ConversationViewSchema>;

const ConversationDetailSchema = ConversationViewSchema.extend({
  messages: z.array(MessageSchema),
});
export type AdminConversation = z.infer<typeof ConversationDetailSchema>;

const AttemptSchema = z.looseObject({
  attempt: z.number(),
  at: z.string(),
  outcome: z.enum(['success', 'failure']),
  httpStatus: z.number().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
});
export type AdminAttempt = z.infer<typeof AttemptSchema>;

const DeliverySchema = z.looseObject({
  id: z.string(),
  event: z.string(),
  conversationId: z.string(),
  payload: z.looseObject({ message: z.looseObject({ id: z.string() }) }),
  state: z.enum(['queued', 'delivering', 'delivered', 'failed', 'skipped']),
  attempts: z.array(AttemptSchema),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  redeliveryOf: z.string().nullable(),
});
export type AdminDelivery = z.infer<typeof DeliverySchema>;

const RequestSchema = z.looseObject({
  seq: z.number(),
  at: z.string(),
  method: z.string(),
  path: z.string(),
  endpoint: z.string().nullable(),
  authenticated: z.boolean(),
  credential: z.enum(['current', 'rotated', 'invalid']).nullable(),
  httpStatus: z.number().nullable(),
  rc: z.number().nullable(),
  errorMsg: z.string().nullable(),
  callerGone: z.boolean(),
  faults: z.array(z.string()),
  body: z.unknown(),
  durationMs: z.number(),
});
export type AdminRequest = z.infer<typeof RequestSchema>;

const FaultSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  mode: z.string().optional(),
  fired: z.number(),
});
const StateSchema = z.looseObject({
  conversations: z.number(),
  requestsSeen: z.number(),
  requestsLogged: z.number(),
  authStorm: z.boolean(),
  seed: z.number(),
});

export type ChannelType = 'whatsapp_qr' | 'whatsapp_api' | 'telegram' | 'instagram' | 'webchat';

export interface FaultSpec {
  type: 'error' | 'rate_limit' | 'latency' | 'drop';
  endpoint?: 'all' | 'send' | 'history' | 'note' | 'needHuman';
  fraction?: number;
  mode?: 'before' | 'after';
  status?: number;
  retryAfterSeconds?: number;
  latencyMs?: number;
  delivery?: 'form' | 'http';
}

export class AdminClient {
  /**
   * `businessId`: the business of an emulator that hosts several (sent as `X-Emulator-Business`;
   * `*` for every business on the fault endpoints); without it, the emulator's first business.
   */
  constructor(
    readonly baseUrl: string,
    readonly businessId?: string,
  ) {}

  /** The same admin API, for another business of the emulator (e.g. `admin.business('toko-b')`). */
  business(id: string): AdminClient {
    return new AdminClient(this.baseUrl, id);
  }

  private async call<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const where = `${method} /_emulator${path}${this.businessId === undefined ? '' : ` (business ${this.businessId})`}`;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/_emulator${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(this.businessId === undefined ? {} : { 'x-emulator-business': this.businessId }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (error) {
      throw new FaultSuiteError('EMULATOR_UNREACHABLE', `${where}: the emulator did not answer`, {
        cause: error,
      });
    }
    const text = await response.text();
    if (!response.ok) {
      throw new FaultSuiteError(
        'EMULATOR_ADMIN_FAILED',
        `${where} answered ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new FaultSuiteError(
        'EMULATOR_ADMIN_SHAPE',
        `${where}: unexpected answer (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`,
        { cause: parsed.error },
      );
    }
    return parsed.data;
  }

  createConversation(input: {
    id: string;
    label: string;
    channel: { type: ChannelType; id: string; name?: string };
  }): Promise<AdminConversationView> {
    return this.call('POST', '/conversations', ConversationViewSchema, input);
  }

  /** A customer message (the emulator emits its webhook); `at` places it in the past (epoch ms). */
  customerMessage(conversationId: string, text: string, at?: number): Promise<AdminMessage> {
    return this.call(
      'POST',
      `/conversations/${encodeURIComponent(conversationId)}/customer-message`,
      MessageSchema,
      at === undefined ? { text } : { text, at },
    );
  }

  conversation(id: string): Promise<AdminConversation> {
    return this.call('GET', `/conversations/${encodeURIComponent(id)}`, ConversationDetailSchema);
  }

  async conversations(): Promise<AdminConversationView[]> {
    const out = await this.call(
      'GET',
      '/conversations',
      z.looseObject({ conversations: z.array(ConversationViewSchema) }),
    );
    return out.conversations;
  }

  async deliveries(): Promise<AdminDelivery[]> {
    const out = await this.call('GET', '/deliveries', z.looseObject({ deliveries: z.array(DeliverySchema) }));
    return out.deliveries;
  }

  delivery(id: string): Promise<AdminDelivery> {
    return this.call('GET', `/deliveries/${encodeURIComponent(id)}`, DeliverySchema);
  }

  redeliver(id: string): Promise<AdminDelivery> {
    return this.call('POST', `/deliveries/${encodeURIComponent(id)}/redeliver`, DeliverySchema);
  }

  /** The request log, oldest first; `limit`: only the latest that many. */
  async requests(limit?: number): Promise<AdminRequest[]> {
    const path = limit === undefined ? '/requests' : `/requests?limit=${limit}`;
    const out = await this.call('GET', path, z.looseObject({ requests: z.array(RequestSchema) }));
    return out.requests;
  }

  addFault(spec: FaultSpec) {
    return this.call('POST', '/faults', FaultSchema, spec);
  }

  async faults() {
    const out = await this.call('GET', '/faults', z.looseObject({ faults: z.array(FaultSchema) }));
    return out.faults;
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/faults', z.unknown());
  }

  async setAuthStorm(active: boolean): Promise<void> {
    await this.call('PUT', '/auth-storm', z.unknown(), { active });
  }

  state() {
    return this.call('GET', '/state', StateSchema);
  }
}
