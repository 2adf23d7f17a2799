import {
  type ApiReply,
  apiError,
  apiSuccess,
  INVALID_DATA_TEXT,
  MESSAGE_LIST_TEXT,
  NO_API_FEATURE_TEXT,
  SUCCESS_TEXT,
  TOO_MANY_REQUESTS_TEXT,
} from './api-envelopes.js';
import { authenticateRequest, type HeaderBag, type PlatformCredentials } from './authenticate-request.js';
import type { ApiForm } from './channels.js';
import type { EmulatorState } from './emulator-state.js';
import type { FailureFault } from './faults.js';
import { toCurrentFormMessage, toEarlierFormMessage } from './message-views.js';
import {
  CONVERSATION_ID_REQUIRED,
  CONVERSATION_NOT_FOUND,
  parseCursorParam,
  parseNeedHumanRequest,
  parseNoteRequest,
  parseSendRequest,
} from './platform-requests.js';
import type { EndpointName, PlatformRoute } from './platform-routes.js';
import type { SlidingWindowLimiter } from './sliding-window-limiter.js';

/**
 * The platform API as plain functions over the emulator's state: request in, reply out, no HTTP
 * framework. `gatePlatformRequest` is authentication and rate limiting; `executePlatformOperation`
 * is the operation itself. The Express adapter (platform-handler.ts) adds faults and the socket.
 */
export interface RateLimitConfig {
  /** Requests per window for a caller with valid credentials (earlier form: 100 per minute). */
  readonly authenticated: number;
  /** Requests per window for a caller without (valid) credentials, per address (earlier form: 10). */
  readonly unauthenticated: number;
  readonly windowMs: number;
}

export interface PlatformContext {
  readonly form: ApiForm;
  readonly state: EmulatorState;
  /** The credentials in force (an auth storm replaces the secret). */
  readonly credentials: () => PlatformCredentials;
  /** During an auth storm, the credentials it rotated away (the ones a client still holds). */
  readonly rotatedCredentials: () => PlatformCredentials | undefined;
  readonly rateLimit: RateLimitConfig | undefined;
  readonly limiter: SlidingWindowLimiter;
  readonly now: () => number;
  readonly version: string;
  /** False while the business's plan lacks the API feature (a switch of the admin API). */
  readonly apiFeature: () => boolean;
}

export interface PlatformRequest {
  readonly route: PlatformRoute;
  readonly query: Readonly<Record<string, unknown>>;
  readonly headers: HeaderBag;
  /** The parsed JSON body (POST only). */
  readonly body: unknown;
  /** Why the body could not be read (not JSON, wrong Content-Type, too large); null when it could. */
  readonly bodyProblem: string | null;
  readonly remoteAddress: string;
}

/**
 * Which credentials a request presented (never the secret itself): those in force, those an auth
 * storm rotated away (a client that has not been told yet), or neither; null when not checked.
 */
export type PresentedCredential = 'current' | 'rotated' | 'invalid';

export interface GateResult {
  readonly authenticated: boolean;
  /** The auth scheme used, or why authentication failed (never a secret). */
  readonly auth: string;
  readonly credential: PresentedCredential | null;
  /** The reply that ends the request here (401 or 429), if any. */
  readonly reject: ApiReply | undefined;
}

/** Authentication and the rate limit. The health check needs neither; `GET /version` needs no credentials. */
export function gatePlatformRequest(context: PlatformContext, request: PlatformRequest): GateResult {
  const { endpoint } = request.route;
  if (endpoint === 'health') {
    return { authenticated: false, auth: 'not required', credential: null, reject: undefined };
  }
  const credentials = context.credentials();
  const options = { allowMerchantHeaders: endpoint === 'history' };
  const verdict = authenticateRequest(context.form, request.headers, credentials, options);
  const auth = verdict.ok ? verdict.scheme : verdict.reason;
  const rotated = verdict.ok ? undefined : context.rotatedCredentials();
  const credential: PresentedCredential = verdict.ok
    ? 'current'
    : rotated !== undefined && authenticateRequest(context.form, request.headers, rotated, options).ok
      ? 'rotated'
      : 'invalid';
  if (context.rateLimit) {
    // Per client identity: the business for valid credentials, the address otherwise.
    const identity = verdict.ok ? `business:${credentials.businessId}` : `address:${request.remoteAddress}`;
    const limit = verdict.ok ? context.rateLimit.authenticated : context.rateLimit.unauthenticated;
    const decision = context.limiter.check(identity, limit, context.now());
    if (!decision.allowed) {
      const reject = apiError(context.form, 429, TOO_MANY_REQUESTS_TEXT, {
        headers: { 'retry-after': String(decision.retryAfterSeconds) },
      });
      return { authenticated: verdict.ok, auth, credential, reject };
    }
  }
  if (!verdict.ok && endpoint !== 'version') {
    return { authenticated: false, auth, credential, reject: apiError(context.form, 401, INVALID_DATA_TEXT) };
  }
  // Interface, "What the service does" 5: the API depends on the plan; "Errors": 403 insufficient
  // permission. Checked after authentication (who asks must be known before what they may do).
  if (verdict.ok && endpoint !== 'version' && !context.apiFeature()) {
    return {
      authenticated: true,
      auth,
      credential,
      reject: apiError(context.form, 403, NO_API_FEATURE_TEXT),
    };
  }
  return { authenticated: verdict.ok, auth, credential, reject: undefined };
}

export function executePlatformOperation(context: PlatformContext, request: PlatformRequest): ApiReply {
  const { form, state } = context;
  switch (request.route.endpoint) {
    case 'send': {
      if (request.bodyProblem !== null) return apiError(form, 400, INVALID_DATA_TEXT);
      const parsed = parseSendRequest(form, request.body);
      if (!parsed.ok) return apiError(form, 400, parsed.errorMsg);
      const { conversationId, content, replyToMessageId } = parsed.value;
      // Not shown for send; the earlier form lists only 400/401/500 for it, so unknown is a 400 there.
      if (!state.getConversation(conversationId)) {
        return apiError(form, form === 'current' ? 404 : 400, CONVERSATION_NOT_FOUND);
      }
      state.sendFromApi(conversationId, content, replyToMessageId);
      return apiSuccess(
        form === 'current'
          ? { conversation_id: conversationId, success: true }
          : { status: 1, message: SUCCESS_TEXT },
      );
    }
    case 'history': {
      const conversationId = request.route.conversationId ?? '';
      if (conversationId.trim() === '') return apiError(form, 400, CONVERSATION_ID_REQUIRED);
      const conversation = state.getConversation(conversationId);
      if (form === 'earlier') {
        // Earlier form: every message, as a plain array; no pagination.
        const all = state.messagesAfter(conversationId, 0, 0);
        const lock = conversation?.needHuman ?? false;
        return apiSuccess({
          status: 1,
          message: MESSAGE_LIST_TEXT,
          data: all.map((message) => toEarlierFormMessage(message, lock)),
        });
      }
      const limit = parseCursorParam(request.query.limit);
      const lastId = parseCursorParam(request.query.last_id);
      if (limit === undefined || lastId === undefined) return apiError(form, 400, INVALID_DATA_TEXT);
      const list = state.messagesAfter(conversationId, lastId, limit);
      const last = list.at(-1);
      return apiSuccess({
        status: 1,
        rc: 200,
        message: MESSAGE_LIST_TEXT,
        data: { list: last ? list.map(toCurrentFormMessage) : null, last_id: last ? last.id : 0 },
        ts: Math.floor(context.now() / 1000),
      });
    }
    case 'note': {
      if (request.bodyProblem !== null) return apiError(form, 400, INVALID_DATA_TEXT);
      const parsed = parseNoteRequest(request.body);
      if (!parsed.ok) return apiError(form, 400, parsed.errorMsg);
      if (!state.getConversation(parsed.value.conversationId))
        return apiError(form, 404, CONVERSATION_NOT_FOUND);
      const note = state.addNote(parsed.value.conversationId, parsed.value.note);
      return apiSuccess(
        form === 'current'
          ? { message_id: note.messageId, success: true }
          : { status: 1, message: SUCCESS_TEXT },
      );
    }
    case 'needHuman': {
      if (request.bodyProblem !== null) return apiError(form, 400, INVALID_DATA_TEXT);
      const parsed = parseNeedHumanRequest(request.body);
      if (!parsed.ok) return apiError(form, 400, parsed.errorMsg);
      const { conversationId } = parsed.value;
      // Not shown for need-human; `conversation not found` as for notes.
      if (!state.getConversation(conversationId)) return apiError(form, 404, CONVERSATION_NOT_FOUND);
      state.markNeedHuman(conversationId);
      return apiSuccess(
        form === 'current'
          ? { success: true, conversation_id: conversationId }
          : { status: 1, message: SUCCESS_TEXT },
      );
    }
    case 'needHumanTotal':
      return apiSuccess({ status: 1, message: SUCCESS_TEXT, data: { total: state.needHumanTotal() } });
    case 'version':
      // Not shown; one of the shapes webhook-payloads.md §3 says clients accept.
      return apiSuccess({ version: context.version });
    case 'health':
      return apiSuccess({ status: 1, message: SUCCESS_TEXT, data: { healthy: true } });
  }
}

/** Server-side error texts seen on the platform (webhook-payloads.md §3), per operation. */
const SERVER_ERROR_TEXT: Partial<Record<EndpointName, string>> = {
  note: 'error create note',
  needHuman: 'error update lock by human',
  needHumanTotal: 'error count conversation',
};

/** The reply of an injected error or rate-limit fault (a dropped connection has none). */
export function faultReply(form: ApiForm, endpoint: EndpointName, fault: FailureFault): ApiReply | undefined {
  if (fault.type === 'error') {
    // The per-operation text also in mode `after` (note stored, then "error create note"): a
    // platform may well say that after storing, and a client must not read it as proof of nothing.
    return apiError(form, fault.status, SERVER_ERROR_TEXT[endpoint] ?? 'internal server error', {
      delivery: fault.delivery,
    });
  }
  if (fault.type === 'rate_limit') {
    return apiError(form, 429, TOO_MANY_REQUESTS_TEXT, {
      delivery: fault.delivery,
      headers: { 'retry-after': String(fault.retryAfterSeconds) },
    });
  }
  return undefined;
}
