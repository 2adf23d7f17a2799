import type { ConversationEvent } from '../../events/conversation-event.js';
import type { RunLogger } from '../../observe/logger.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { StoredFacts } from '../conversation-facts.js';
import type { PlatformErrorClassifier } from '../failures/classify-failure.js';
import type {
  ActionReport,
  ForwardPort,
  PlannedAction,
  PlatformPort,
  RulesPort,
  TimerScheduler,
} from '../ports.js';
import type { RunState } from './run-state.js';

/** What one run's actions are executed with (built by processor/run-planned-actions.ts). */
export interface ExecutionContext {
  keys: BridgeKeys;
  /** The run's plan and ledger, and what it stages for the conversation hash. */
  state: RunState;
  /** Idempotency scope for forwards and timer ids. */
  scope: string;
  event: ConversationEvent;
  conversationId: string;
  facts: StoredFacts;
  platform: PlatformPort;
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  rules: RulesPort;
  timers: TimerScheduler;
  timerIdFor: (scope: string, actionId: string) => string;
  now: () => Date;
  /** Free-form replies stop this long before the window closes (send latency, clock skew). */
  safetyMarginMs: number;
  /** How far before `started` a history message may be dated and still count as ours. */
  reconcileSkewMs: number;
  /** On a replay from the dead-letter set, actions that failed for good are tried again. */
  replay: boolean;
  log: RunLogger;
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
}
