import { randomUUID } from 'node:crypto';
import {
  type ApiRequestRecord,
  type ConversationDetail,
  type ConversationView,
  type MessageView,
  toConversationView,
  toMessageView,
} from './admin-views.js';
import type { PlatformCredentials } from './authenticate-request.js';
import { BoundedLog } from './bounded-log.js';
import type { ApiForm } from './channels.js';
import type { ConversationStatus } from './conversation-status.js';
import { DeliveryProgress } from './delivery-progress.js';
import { EmulatorError } from './emulator-error.js';
import type { ResolvedBusiness, ResolvedEmulatorOptions } from './emulator-options.js';
import {
  type DeliveryStatus,
  EmulatorState,
  type MediaType,
  type MessageContent,
  type NewConversation,
} from './emulator-state.js';
import { type ActiveFault, type FaultPlan, FaultRegistry, type FaultSpecInput } from './faults.js';
import type { InboxClocks } from './inbox-clocks.js';
import { MOMENT_HINT, parseMoment } from './parse-moment.js';
import type { PlatformContext } from './platform-api.js';
import type { EndpointName } from './platform-routes.js';
import { applySeedData, type SeedData } from './seed-data.js';
import { SlidingWindowLimiter } from './sliding-window-limiter.js';
import {
  type DeliveryLogEntry,
  type DeliveryRecord,
  WebhookDispatcher,
  type WebhookTarget,
} from './webhook-dispatcher.js';
import { buildHandoverPayload, buildWebhookPayload } from './webhook-payload.js';

export interface CustomerMessageInput {
  readonly text?: string | undefined;
  readonly media?:
    | {
        readonly type: MediaType;
        readonly url: string;
        readonly mimeType?: string | undefined;
        readonly caption?: string | undefined;
      }
    | undefined;
  /** When the customer sent it (epoch ms, ISO with zone, WIB, or an age like `25h`); now when omitted. */
  readonly at?: string | number | undefined;
  readonly senderName?: string | undefined;
}

/** How a business's admin finds the other businesses of its emulator (emulator-businesses.ts). */
export interface BusinessLookup {
  /** The admin of business `id`; throws EMULATOR_NOT_FOUND naming the hosted ids when there is none. */
  get(id: string): EmulatorAdmin;
  /** Every hosted business id, the first (the default) first. */
  ids(): readonly string[];
}

/**
 * The control surface of one business of the emulator: everything the admin HTTP API
 * (/_emulator/) does for it, callable from tests in-process. It owns the business's state and the
 * machinery around it (delivery progress, webhooks, faults, rate limits, the request log); two
 * businesses share none of it. `startEmulator` hands out the first business's
 * admin; `business(id)` reaches the others.
 */
export class EmulatorAdmin {
  readonly form: ApiForm;
  /** The Business ID this admin speaks for. */
  readonly businessId: string;
  private readonly state: EmulatorState;
  private readonly progress: DeliveryProgress;
  private readonly dispatcher: WebhookDispatcher;
  private readonly faultRegistry: FaultRegistry;
  private readonly limiter: SlidingWindowLimiter;
  private readonly requestLog: BoundedLog<ApiRequestRecord>;
  private readonly context: PlatformContext;
  private webhookTarget: WebhookTarget | undefined;
  private readonly handoverDispatcher: WebhookDispatcher;
  private handoverTarget: WebhookTarget | undefined;
  private apiFeatureOn: boolean;
  private stormSecret: string | undefined;
  private requestSeq = 0;

  constructor(
    private readonly options: ResolvedEmulatorOptions,
    private readonly account: ResolvedBusiness,
    private readonly initialSeed: SeedData | undefined,
    private readonly lookup: BusinessLookup,
  ) {
    this.form = options.form;
    this.businessId = account.id;
    this.webhookTarget = account.webhook;
    const onWebhookFailure = options.onWebhookFailure;
    // Tick-mode progress runs on timers, so it follows the wall clock, not an injected one.
    this.progress = new DeliveryProgress(options.delivery, options.finalDeliveryStatus, Date.now);
    this.dispatcher = new WebhookDispatcher({
      target: () => this.webhookTarget,
      retryDelaysMs: options.webhookRetryDelaysMs,
      timeoutMs: options.webhookTimeoutMs,
      logSize: options.deliveryLogSize,
      onFailure:
        onWebhookFailure === undefined
          ? undefined
          : (failure) => onWebhookFailure({ ...failure, businessId: account.id }),
    });
    this.handoverTarget = account.handoverWebhook;
    this.apiFeatureOn = account.apiFeature;
    this.handoverDispatcher = new WebhookDispatcher({
      target: () => this.handoverTarget,
      retryDelaysMs: options.webhookRetryDelaysMs,
      timeoutMs: options.webhookTimeoutMs,
      logSize: options.deliveryLogSize,
    });
    const webhookContext = {
      form: options.form,
      business: this.identity,
      owner: options.owner,
      ai: options.ai,
    };
    this.state = new EmulatorState({
      business: this.identity,
      ai: options.ai,
      defaultAgentName: options.defaultAgentName,
      aiMarksHandled: options.aiMarksHandled,
      echoApiSends: options.echoApiSends,
      links: options.links,
      now: options.now,
      hooks: {
        onEvent: (event) => {
          const payload = buildWebhookPayload(event, webhookContext);
          if (payload) this.dispatcher.enqueue(payload);
          // The AI's hand-over also calls the agent's hand-over address, when one is set.
          if (event.kind === 'assigned' && event.agentName === null && this.handoverTarget !== undefined) {
            this.handoverDispatcher.enqueue(buildHandoverPayload(event, webhookContext));
          }
        },
        onOutbound: (message, outsideWindow) => this.progress.track(message, outsideWindow),
      },
    });
    this.faultRegistry = new FaultRegistry(options.seed);
    const windowMs = options.rateLimit?.windowMs ?? 60_000;
    this.limiter = new SlidingWindowLimiter(windowMs);
    this.requestLog = new BoundedLog(options.requestLogSize);
    this.context = {
      form: options.form,
      state: this.state,
      credentials: () => this.credentials(),
      rotatedCredentials: () =>
        this.stormSecret === undefined
          ? undefined
          : { businessId: this.account.id, secret: this.account.secret },
      rateLimit: options.rateLimit,
      limiter: this.limiter,
      now: options.now,
      version: options.version,
      apiFeature: () => this.apiFeatureOn,
    };
    if (initialSeed) applySeedData(this.state, initialSeed, options.now());
  }

  private get identity(): { id: string; name: string } {
    return { id: this.account.id, name: this.account.name };
  }

  // ---- the other businesses of the emulator ----

  /**
   * The admin of another business of this emulator (or of this one), e.g.
   * `emulator.admin.business('toko-b').customerMessage(...)`. Throws EMULATOR_NOT_FOUND for an id
   * the emulator does not host.
   */
  business(id: string): EmulatorAdmin {
    return this.lookup.get(id);
  }

  /** Every business id the emulator hosts, the first (the admin API's default) first. */
  businessIds(): readonly string[] {
    return this.lookup.ids();
  }

  /** The business's name (sender of its API messages, `bisnis.name` in its webhooks). */
  get businessName(): string {
    return this.account.name;
  }

  /** @internal The configured Business ID and Secret Key: who a request's credentials name. */
  businessKey(): { businessId: string; secret: string } {
    return { businessId: this.account.id, secret: this.account.secret };
  }

  // ---- used by the HTTP adapters ----

  /** @internal The platform API's view of the emulator. */
  platformContext(): PlatformContext {
    return this.context;
  }

  /** @internal */
  decideFaults(endpoint: EndpointName): FaultPlan {
    return this.faultRegistry.decide(endpoint);
  }

  /** @internal */
  recordRequest(record: Omit<ApiRequestRecord, 'seq'>): void {
    this.requestSeq += 1;
    this.requestLog.push({ seq: this.requestSeq, ...record });
  }

  // ---- overview (the admin API's state, the inbox page) ----

  /** The bridge's clocks of a conversation, when the emulator was given a source (inbox page). */
  async clocks(conversationId: string): Promise<InboxClocks | null> {
    return this.options.clocks ? this.options.clocks(conversationId, this.businessId) : null;
  }

  /** Now, on the emulator's clock (ms). */
  nowMs(): number {
    return this.options.now();
  }

  summary() {
    return {
      form: this.form,
      business: this.identity,
      conversations: this.state.listConversations().length,
      statusCounts: this.state.countByStatus(),
      needHumanTotal: this.state.needHumanTotal(),
      webhook: this.webhook(),
      handoverWebhook: this.handoverWebhook(),
      apiFeature: this.apiFeatureOn,
      faults: this.faultRegistry.list(),
      seed: this.faultRegistry.seed,
      authStorm: this.stormSecret !== undefined,
      rateLimit: this.options.rateLimit ?? null,
      delivery: this.options.delivery,
      requestsLogged: this.requestLog.size,
      requestsSeen: this.requestSeq,
      deliveriesPending: this.progress.pending,
    };
  }

  // ---- conversations ----

  createConversation(input: NewConversation = {}): ConversationView {
    return toConversationView(this.state.createConversation(input));
  }

  conversation(id: string): ConversationDetail {
    const record = this.state.requireConversation(id);
    const all = record.messages.map(toMessageView);
    return { ...toConversationView(record), messages: all, notes: all.filter((message) => message.isNote) };
  }

  conversations(filter: { status?: ConversationStatus | undefined } = {}): ConversationView[] {
    return this.state
      .listConversations()
      .filter((conversation) => filter.status === undefined || conversation.status === filter.status)
      .map(toConversationView);
  }

  statusCounts(): Record<ConversationStatus, number> {
    return this.state.countByStatus();
  }

  needHumanTotal(): number {
    return this.state.needHumanTotal();
  }

  /** A customer message arrives (emits the inbound webhook). */
  customerMessage(conversationId: string, input: CustomerMessageInput): MessageView {
    let atMs: number | undefined;
    if (input.at !== undefined) {
      atMs = parseMoment(input.at, this.options.now());
      if (atMs === undefined) {
        throw new EmulatorError(
          'EMULATOR_BAD_REQUEST',
          `cannot read at=${JSON.stringify(input.at)} as a time: ${MOMENT_HINT}`,
        );
      }
    }
    let content: MessageContent;
    if (input.media) {
      content = {
        kind: 'media',
        type: input.media.type,
        url: input.media.url,
        mimeType:
          input.media.mimeType ?? (input.media.type === 'image' ? 'image/jpeg' : 'application/octet-stream'),
        caption: input.media.caption ?? input.text ?? '',
      };
    } else if (input.text !== undefined && input.text !== '') {
      content = { kind: 'text', text: input.text };
    } else {
      throw new EmulatorError('EMULATOR_BAD_REQUEST', 'a customer message needs text or media');
    }
    return toMessageView(
      this.state.addCustomerMessage(conversationId, { content, atMs, senderName: input.senderName }),
    );
  }

  /** The AI replies (emits `ai.message_generated`); refused while the AI is quiet. */
  aiReply(conversationId: string, text: string): MessageView {
    return toMessageView(this.state.addAiReply(conversationId, text));
  }

  /** A dashboard agent replies (emits `agent.message_out`). */
  agentReply(conversationId: string, text: string, agentName?: string): MessageView {
    return toMessageView(this.state.addAgentReply(conversationId, text, agentName));
  }

  takeOver(conversationId: string, agentName?: string): ConversationView {
    return toConversationView(this.state.takeOver(conversationId, agentName));
  }

  returnToAi(conversationId: string): ConversationView {
    return toConversationView(this.state.returnToAi(conversationId));
  }

  done(conversationId: string): ConversationView {
    return toConversationView(this.state.done(conversationId));
  }

  /** The AI's hand-over rule fires: Butuh CS, the AI pauses. */
  handOver(conversationId: string): ConversationView {
    return toConversationView(this.state.handOver(conversationId));
  }

  block(conversationId: string): ConversationView {
    return toConversationView(this.state.block(conversationId));
  }

  skip(conversationId: string): ConversationView {
    return toConversationView(this.state.skip(conversationId));
  }

  markRead(conversationId: string): ConversationView {
    return toConversationView(this.state.markRead(conversationId));
  }

  setDeliveryStatus(messageId: number, status: DeliveryStatus): MessageView {
    return toMessageView(this.state.setDeliveryStatus(messageId, status));
  }

  /** Moves every message still on its way one delivery step (manual delivery mode). */
  advanceDelivery(): number {
    return this.progress.advance();
  }

  // ---- request log ----

  /** The newest `limit` platform API requests, oldest first. */
  requests(limit?: number): ApiRequestRecord[] {
    return this.requestLog.toArray(limit);
  }

  // ---- webhooks ----

  webhook(): { url: string; secretSet: boolean } | null {
    return this.webhookTarget
      ? { url: this.webhookTarget.url, secretSet: this.webhookTarget.secret !== '' }
      : null;
  }

  /** Where webhooks go; without a secret they carry the Secret Key, as the interface says. */
  setWebhook(target: { url: string; secret?: string | undefined } | undefined): void {
    this.webhookTarget =
      target === undefined ? undefined : { url: target.url, secret: target.secret ?? this.account.secret };
  }

  deliveries(): DeliveryRecord[] {
    return this.dispatcher.list();
  }

  handoverWebhook(): { url: string; secretSet: boolean } | null {
    return this.handoverTarget
      ? { url: this.handoverTarget.url, secretSet: this.handoverTarget.secret !== '' }
      : null;
  }

  /** The agent's hand-over address; without a secret the calls carry the Secret Key. */
  setHandoverWebhook(target: { url: string; secret?: string | undefined } | undefined): void {
    this.handoverTarget =
      target === undefined ? undefined : { url: target.url, secret: target.secret ?? this.account.secret };
  }

  /** Deliveries to the hand-over address (kept apart from the message webhooks). */
  handoverDeliveries(): DeliveryRecord[] {
    return this.handoverDispatcher.list();
  }

  // ---- the plan ----

  /** Whether the business's plan includes the API feature; off, every API call gets rc 403. */
  setApiFeature(enabled: boolean): void {
    this.apiFeatureOn = enabled;
  }

  get apiFeature(): boolean {
    return this.apiFeatureOn;
  }

  delivery(id: string): DeliveryRecord {
    const record = this.dispatcher.get(id);
    if (!record) {
      throw new EmulatorError(
        'EMULATOR_NOT_FOUND',
        `delivery ${JSON.stringify(id)} does not exist: list them with GET /_emulator/deliveries`,
      );
    }
    return record;
  }

  /** Every webhook attempt: event, attempt n, status, body or error, time. */
  deliveryLog(): DeliveryLogEntry[] {
    return this.dispatcher.log();
  }

  redeliver(deliveryId: string): DeliveryRecord {
    return this.dispatcher.redeliver(deliveryId);
  }

  /** Resolves when no webhook delivery is queued or in flight. */
  async deliveriesSettled(): Promise<void> {
    await Promise.all([this.dispatcher.idle(), this.handoverDispatcher.idle()]);
  }

  // ---- faults ----

  addFault(spec: FaultSpecInput): ActiveFault {
    return this.faultRegistry.add(spec);
  }

  removeFault(id: string): void {
    this.faultRegistry.remove(id);
  }

  clearFaults(): void {
    this.faultRegistry.clear();
  }

  faults(): ActiveFault[] {
    return this.faultRegistry.list();
  }

  /** Restarts the fault RNG with `seed`. */
  reseed(seed: number): void {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
      throw new EmulatorError(
        'EMULATOR_BAD_REQUEST',
        `seed must be an integer from 0 to 4294967295, got ${seed}`,
      );
    }
    this.faultRegistry.reseed(seed);
  }

  /** Auth storm: the secret is rotated, so every authenticated call gets 401 until it is turned off. */
  setAuthStorm(active: boolean): void {
    this.stormSecret = active ? `rotated-${randomUUID()}` : undefined;
  }

  get authStorm(): boolean {
    return this.stormSecret !== undefined;
  }

  private credentials(): PlatformCredentials {
    return { businessId: this.account.id, secret: this.stormSecret ?? this.account.secret };
  }

  // ---- lifecycle ----

  /**
   * Back to the start: the seed's conversations (none with `empty`), no faults, no auth storm, empty
   * logs, the configured webhook, the RNG restarted with the configured seed.
   */
  async reset(options: { empty?: boolean } = {}): Promise<void> {
    this.progress.clear();
    await this.dispatcher.clear();
    await this.handoverDispatcher.clear();
    this.state.reset();
    this.faultRegistry.clear();
    this.faultRegistry.reseed(this.options.seed);
    this.stormSecret = undefined;
    this.limiter.clear();
    this.requestLog.clear();
    this.requestSeq = 0;
    this.webhookTarget = this.account.webhook;
    this.handoverTarget = this.account.handoverWebhook;
    this.apiFeatureOn = this.account.apiFeature;
    if (this.initialSeed && !options.empty) applySeedData(this.state, this.initialSeed, this.options.now());
  }

  /** @internal Stops timers and in-flight deliveries (startEmulator's close() calls it). */
  async shutdown(): Promise<void> {
    this.progress.close();
    await Promise.all([this.dispatcher.close(), this.handoverDispatcher.close()]);
  }
}
