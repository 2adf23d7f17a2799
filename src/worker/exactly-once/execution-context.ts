import type { WorkerSettings } from '../../config/config-schema.js';
import type { ConversationEvent } from '../../events/conversation-event.js';
import type { RunLogger } from '../../observe/logger.js';
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

/**
 * The ports an action's life needs, by concern. The processors hold them (processor-deps.ts) and
 * pass these groups on whole: nothing is copied member by member into a run.
 */

/** The outside world an action reaches: the platform, forward destinations, the timers it sets. */
export interface ActionPorts {
  platform: PlatformPort;
  /** Which platform errors are refusals, rate limits, closed windows (failures/classify-failure.ts). */
  classifyPlatformError: PlatformErrorClassifier;
  forwarder: ForwardPort;
  timers: TimerScheduler;
}

/** The worker's clock, and the `worker:` settings judged by it (safety margin, skew, backoff). */
export interface ClockPort {
  now: () => Date;
  settings: WorkerSettings;
}

/** Who hears of an action's fate (metrics); neither changes what runs. */
export interface ActionObserver {
  onAction?: (report: ActionReport) => void;
  onWindowBlocked?: (action: PlannedAction) => void;
}

/** What one run acts for: an event, a fired timer (with the event that set it) or a burst. */
export interface RunSubject {
  /** Ledger and idempotency scope: the event key, the timer id or the burst id. */
  scope: string;
  event: ConversationEvent;
  conversationId: string;
  facts: StoredFacts;
  /** The rules as they were when the run began (a reload does not change a running run). */
  rules: RulesPort;
  /** On a replay from the dead-letter set, actions that failed for good are tried again. */
  replay: boolean;
  /** The run's plan and ledger, and what it stages for the conversation hash. */
  state: RunState;
  log: RunLogger;
}

/** What one run's actions are executed with: the ports by group, and the run. */
export interface ExecutionContext {
  actions: ActionPorts;
  clock: ClockPort;
  observe: ActionObserver;
  run: RunSubject;
}
