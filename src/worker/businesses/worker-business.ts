import type { BusinessNaming } from '../../events/business-naming.js';
import type { BridgeKeys } from '../../queue/redis-keys.js';
import type { RedisClient } from '../../redis/redis-client.js';
import type { PlatformErrorClassifier } from '../failures/classify-failure.js';
import type { EventRecorder, ForwardPort, PlatformPort, RulesPort } from '../ports.js';
import type { ShadowCandidate } from '../shadow/shadow-observer.js';

/**
 * What the worker runs one business's jobs with: its platform (with its own credentials and base
 * URL), its rules, its CRM destinations and, when it records events, its recorder. A config without
 * `businesses:` is one of these, `default`, of the single-business naming.
 */
export interface WorkerBusiness {
  /** Its id (the `business` label of its metrics and logs). */
  readonly id: string;
  /** How its data is named: which keys it reads and writes, which jobs it runs. */
  readonly naming: BusinessNaming;
  readonly platform: PlatformPort;
  readonly classifyPlatformError: PlatformErrorClassifier;
  readonly forwarder: ForwardPort;
  /** The current rules (hot reload swaps what this returns). */
  readonly rules: () => RulesPort;
  /** Set when its events are recorded (`record.enabled`): builds the recorder on the command connection. */
  readonly makeRecorder?: (redis: RedisClient, keys: BridgeKeys) => EventRecorder;
  /** Its shadow rules in force now (undefined while off; hot reload swaps what this returns). */
  readonly shadow?: () => ShadowCandidate | undefined;
}
