import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { PlatformErrorClassifier } from '../failures/classify-failure.js';
import type { EventRecorder, ForwardPort, PlatformPort, RulesPort } from '../ports.js';
import type { ShadowCandidate } from '../shadow/shadow-observer.js';

/**
 * What the worker runs one business's jobs with (issue 26): its platform (with its own
 * credentials and base URL), its rules, its CRM destinations and, when it records events, its
 * recorder. A bridge of one business has one of these with id null.
 */
export interface WorkerBusiness {
  /** Its id; null: the one business of a config without `businesses:` (keys and metrics as before). */
  readonly id: string | null;
  readonly platform: PlatformPort;
  readonly classifyPlatformError: PlatformErrorClassifier;
  readonly forwarder: ForwardPort;
  /** The current rules (hot reload swaps what this returns). */
  readonly rules: () => RulesPort;
  /** Set when its events are recorded (`record.enabled`): builds the recorder on the command connection. */
  readonly makeRecorder?: (redis: RedisClient, keys: BridgeKeys) => EventRecorder;
  /** Its shadow rules in force now (issue 28; undefined while off, hot reload swaps what this returns). */
  readonly shadow?: () => ShadowCandidate | undefined;
}
