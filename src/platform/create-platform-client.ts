import {
  buildAddNote,
  buildGetMessages,
  buildGetNeedHumanTotal,
  buildGetVersion,
  buildMarkNeedHuman,
  buildSendMessage,
  type GetMessagesInput,
  type SendMessageInput,
  sliceHistory,
} from './build-requests.js';
import { type PlatformClientOptions, resolveClientOptions } from './client-options.js';
import { executeRequest } from './execute-request.js';
import type { HistoryPage } from './parse-responses.js';
import { isPlatformError, PlatformError } from './platform-error.js';
import type { PlatformMessage } from './platform-message.js';
import { ReplyWindowClosedError } from './reply-window-closed-error.js';

export interface SendMessageOptions {
  /**
   * When the channel's free-form reply window closes (the worker computes it). At or after this
   * instant the send is refused with ReplyWindowClosedError, without calling the platform.
   */
  windowClosesAt?: Date | undefined;
  /**
   * The clock `windowClosesAt` is judged by: the caller's, which computed it (default: the system
   * clock). A worker whose clock is shifted for a test must not have its guard read another one.
   */
  now?: (() => Date) | undefined;
}

export interface IterateMessagesOptions {
  /** Start after this message id (exclusive); 0 or absent: from the beginning. */
  afterId?: number | undefined;
  /** Messages per request (current form); default 100. The earlier form always returns everything. */
  pageSize?: number | undefined;
  /** Stop after this many pages (default 1000); resume from the last id you saw. */
  maxPages?: number | undefined;
}

/**
 * The typed client for the platform's HTTP interface, in either form. Every method throws
 * PlatformError (see its `code`); sendMessage also ReplyWindowClosedError. The errors each call
 * can throw are listed in docs/client.md.
 */
export interface PlatformClient {
  readonly form: 'current' | 'earlier';
  /** POST /v1/message. */
  sendMessage(
    input: SendMessageInput,
    options?: SendMessageOptions,
  ): Promise<{ conversationId: string; messageId?: string }>;
  /** GET /v1/message/{id}: one page; `lastId` is the cursor to pass next (it never goes back). */
  getMessages(conversationId: string, options?: GetMessagesInput): Promise<HistoryPage>;
  /** Walks the history cursor from `afterId`, one message at a time, oldest first. */
  iterateMessages(
    conversationId: string,
    options?: IterateMessagesOptions,
  ): AsyncGenerator<PlatformMessage, void, undefined>;
  /** POST /v1/note. */
  addNote(conversationId: string, note: string): Promise<{ messageId?: string }>;
  /** POST /v1/conversation/need-human. Marking an already-marked conversation succeeds. */
  markNeedHuman(conversationId: string): Promise<void>;
  /** GET /v1/conversation/need-human/total. */
  getNeedHumanTotal(): Promise<number>;
  /** GET /version, e.g. `1.3` (a leading `v` is dropped). */
  getVersion(): Promise<string>;
}

const DEFAULT_PAGE_SIZE = 100;
const DEFAULT_MAX_PAGES = 1000;

function invalidOption(operation: 'iterateMessages' | 'sendMessage', detail: string): PlatformError {
  return new PlatformError({
    code: 'VALIDATION',
    operation: operation === 'iterateMessages' ? 'getMessages' : operation,
    method: operation === 'iterateMessages' ? 'GET' : 'POST',
    path: operation === 'iterateMessages' ? '/v1/message/{conversation_id}' : '/v1/message',
    statusCode: null,
    rc: null,
    platformMessage: null,
    retryAfterMs: null,
    attempts: 0,
    detail,
  });
}

const positiveInt = (value: unknown, fallback: number): number | undefined => {
  if (value === undefined) return fallback;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
};

/**
 * Creates the client. Options are validated at once (PlatformClientOptionsError lists every
 * problem). See docs/client.md for the options, the auth schemes and the retry policy.
 */
export function createPlatformClient(input: PlatformClientOptions): PlatformClient {
  const options = resolveClientOptions(input);

  const getMessages = async (conversationId: string, window: GetMessagesInput = {}): Promise<HistoryPage> => {
    const request = buildGetMessages(options, conversationId, window);
    const page = await executeRequest(request, options);
    return sliceHistory(page, request.window);
  };

  return {
    form: options.form,

    async sendMessage(message, sendOptions = {}) {
      const closesAt = sendOptions.windowClosesAt;
      if (closesAt !== undefined) {
        if (!(closesAt instanceof Date) || Number.isNaN(closesAt.getTime())) {
          throw invalidOption('sendMessage', 'windowClosesAt must be a valid Date');
        }
        const now = sendOptions.now?.() ?? new Date();
        if (now.getTime() >= closesAt.getTime()) {
          throw new ReplyWindowClosedError(String(message.conversationId), closesAt, now);
        }
      }
      return executeRequest(buildSendMessage(options, message), options);
    },

    getMessages,

    async *iterateMessages(conversationId, iterate = {}) {
      const pageSize = positiveInt(iterate.pageSize, DEFAULT_PAGE_SIZE);
      const maxPages = positiveInt(iterate.maxPages, DEFAULT_MAX_PAGES);
      const afterId = iterate.afterId ?? 0;
      if (pageSize === undefined)
        throw invalidOption('iterateMessages', 'pageSize must be a positive integer');
      if (maxPages === undefined)
        throw invalidOption('iterateMessages', 'maxPages must be a positive integer');
      if (!Number.isSafeInteger(afterId) || afterId < 0) {
        throw invalidOption('iterateMessages', 'afterId must be a non-negative integer');
      }
      if (options.form === 'earlier') {
        // No pagination in the earlier form: one answer holds every message.
        const page = await getMessages(conversationId, { lastId: afterId });
        yield* page.messages;
        return;
      }
      // The interface does not say whether `limit` keeps the oldest or the newest messages after
      // `last_id` (docs/conformance.md, "Ambiguous readings"). Read as the newest, a walk would
      // take the newest page, jump its cursor to the end and silently skip everything older. Both
      // readings agree on a page that is not full (it holds everything after the cursor), so a
      // full page is held back until the next one shows more came after it; a full page followed
      // by nothing is read again without `limit` ("empty or 0 means all messages"), which is
      // complete and in order under either reading, at the cost of one request.
      let cursor = afterId;
      let held: { from: number; messages: readonly PlatformMessage[] } | null = null;
      for (let pages = 0; pages < maxPages; pages += 1) {
        const page = await getMessages(conversationId, { lastId: cursor, limit: pageSize });
        // sliceHistory dropped anything at or below the cursor, so an empty page here means either
        // the end or a server that does not advance its cursor: stop in both cases.
        const end = page.messages.length === 0 || page.lastId <= cursor;
        if (held !== null) {
          if (end) {
            const all = await getMessages(conversationId, { lastId: held.from });
            yield* all.messages;
            return;
          }
          yield* held.messages;
          held = null;
        }
        if (end) return;
        if (page.messages.length >= pageSize) held = { from: cursor, messages: page.messages };
        else yield* page.messages;
        cursor = page.lastId;
      }
      // maxPages reached: what was read is still returned; the caller resumes from the last id.
      if (held !== null) yield* held.messages;
    },

    async addNote(conversationId, note) {
      return executeRequest(buildAddNote(options, conversationId, note), options);
    },

    async markNeedHuman(conversationId) {
      try {
        await executeRequest(buildMarkNeedHuman(options, conversationId), options);
      } catch (error) {
        // The spec says a repeat succeeds; a platform that answers "already ..." instead is
        // telling us the mark is in place, which is what the caller wanted.
        if (
          isPlatformError(error, 'VALIDATION') &&
          error.attempts > 0 &&
          /already/i.test(error.platformMessage ?? '')
        ) {
          return;
        }
        throw error;
      }
    },

    async getNeedHumanTotal() {
      return executeRequest(buildGetNeedHumanTotal(options), options);
    },

    async getVersion() {
      return executeRequest(buildGetVersion(options), options);
    },
  };
}
