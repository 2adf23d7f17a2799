import { BUSINESS_ID_PATTERN } from '../events/business-id.js';
import { type BusinessNaming, SINGLE_BUSINESS_ID } from '../events/business-naming.js';
import type { CompiledRules } from '../rules/compile-rules.js';
import type { BridgeConfig } from './config-schema.js';

/**
 * Many businesses, one bridge: what a loaded business is, and the words for its id. A config
 * without `businesses:` is a table of one business, DEFAULT_BUSINESS_ID, of the single-business
 * naming (events/business-naming.ts).
 */

export const DEFAULT_BUSINESS_ID = SINGLE_BUSINESS_ID;

/** The key of a business entry that gives it the single-business naming (`takes_over: default`). */
export const TAKES_OVER_KEY = 'takes_over';

export { BUSINESS_ID_PATTERN };

/** How the id rules read in a message. */
export const BUSINESS_ID_RULE = '1 to 40 lowercase letters, digits and -, not starting or ending with -';

/** The sections a business may set for itself; every other section is shared by all businesses. */
export const BUSINESS_SECTIONS = [
  'platform',
  'receiver',
  'rules',
  'channels',
  'reply_window',
  'business_hours',
  'timezone',
  'destinations',
  'record',
  'shadow',
] as const;
export type BusinessSection = (typeof BUSINESS_SECTIONS)[number];

/** The only `receiver:` keys a business may set: its webhook path and secrets. */
export const BUSINESS_RECEIVER_KEYS = ['path', 'secrets'] as const;

/** Sections one process has once, whatever the number of businesses (refused in a business). */
export const SHARED_SECTIONS = ['redis', 'worker', 'retention', 'admin', 'log', 'tracing'] as const;

/** The webhook path of a business that does not set `receiver.path`. */
export function defaultWebhookPath(id: string): string {
  return `/webhooks/${id}`;
}

/** A business's compiled candidate rules (`shadow:`; config/load-shadow-rules.ts), and their file. */
export interface ShadowRules {
  /** The candidate file as resolved (relative paths: to the file that names it). */
  readonly file: string;
  readonly rules: CompiledRules;
}

export interface LoadedBusiness {
  /** Its id; DEFAULT_BUSINESS_ID for the one business of a config without `businesses:`. */
  readonly id: string;
  /**
   * How its data is named (Redis keys, event keys, jobs): the single-business naming for the
   * business of a config without `businesses:` and for the one that says `takes_over: default`,
   * its own for every other. Decided here, by the loader, and nowhere else.
   */
  readonly naming: BusinessNaming;
  /** The whole config as this business runs with it: the top level with the business's overrides merged in, validated by configSchema like any config. */
  readonly config: BridgeConfig;
  readonly rules: CompiledRules;
  /** Its candidate rules (`shadow:`), evaluated beside `rules` without acting. */
  readonly shadow?: ShadowRules;
  /** Where it is defined (the config file, or its file in businesses_dir) and the line of its entry, for messages. */
  readonly file: string;
  readonly line: number;
  /**
   * The sections the business wrote itself (`platform`, `receiver`, `rules`, ...), in the order of
   * BUSINESS_SECTIONS; the others are the top level's. Absent for the implicit business.
   */
  readonly overrides?: readonly BusinessSection[];
}
