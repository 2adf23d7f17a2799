import { formatDuration } from '../base/duration.js';
import type { EventKind } from '../events/conversation-event.js';
import { type BurstSettings, DEFAULT_MAX_WAIT_FACTOR, MAX_DEBOUNCE_MS, MAX_WAIT_LIMIT_MS } from './burst.js';

/** A rule's burst fields as written (durations already in ms). */
export interface BurstRuleFields {
  on: readonly string[];
  debounce?: number | undefined;
  max_wait?: number | undefined;
  unless?: readonly EventKind[] | undefined;
  stop?: boolean | undefined;
}

export interface BurstFieldIssue {
  path: string[];
  message: string;
}

/**
 * What the rule schema refuses about `debounce:`, `max_wait:` and a rule's `unless:`,
 * each with the field to edit and how to fix it.
 */
export function burstFieldIssues(r: BurstRuleFields): BurstFieldIssue[] {
  const issues: BurstFieldIssue[] = [];
  if (r.debounce === undefined) {
    if (r.max_wait !== undefined) {
      issues.push({
        path: ['max_wait'],
        message: 'max_wait: belongs to a debounced rule: add debounce: DURATION',
      });
    }
    if (r.unless !== undefined) {
      issues.push({
        path: ['unless'],
        message:
          "unless: on a rule cancels its burst and needs debounce: DURATION (a timer's unless: goes beside its after: in then:)",
      });
    }
    return issues;
  }
  if (r.on.length !== 1 || r.on[0] !== 'message_in') {
    issues.push({
      path: ['on'],
      message: `debounce: groups the customer's messages: the rule must be on: message_in alone, not ${r.on.join(', ')}`,
    });
  }
  if (r.debounce <= 0) {
    issues.push({
      path: ['debounce'],
      message:
        'debounce: 0 would not wait for the next message: give a duration above 0 (e.g. debounce: 20s)',
    });
  } else if (r.debounce > MAX_DEBOUNCE_MS) {
    issues.push({
      path: ['debounce'],
      message: `debounce: ${formatDuration(r.debounce)} is longer than ${formatDuration(MAX_DEBOUNCE_MS)}: to act after a long silence use a timer (after:, unless: message_in)`,
    });
  }
  if (r.max_wait !== undefined && r.max_wait < r.debounce) {
    issues.push({
      path: ['max_wait'],
      message: `max_wait: ${formatDuration(r.max_wait)} is shorter than debounce: ${formatDuration(r.debounce)}: a burst would end before the customer could be quiet for ${formatDuration(r.debounce)}; give max_wait at least the debounce (default ${DEFAULT_MAX_WAIT_FACTOR} × debounce)`,
    });
  } else if (r.max_wait !== undefined && r.max_wait > MAX_WAIT_LIMIT_MS) {
    issues.push({
      path: ['max_wait'],
      message: `max_wait: ${formatDuration(r.max_wait)} is longer than ${formatDuration(MAX_WAIT_LIMIT_MS)}: an open burst keeps its messages meanwhile; give a shorter max_wait`,
    });
  }
  if (r.unless?.includes('message_in')) {
    issues.push({
      path: ['unless'],
      message:
        'unless: message_in cannot cancel a burst: a customer message joins it; name other kinds (e.g. agent_reply)',
    });
  }
  if (r.stop === true) {
    issues.push({
      path: ['stop'],
      message:
        'stop: has no effect on a debounced rule: it is evaluated on its own, once per burst; remove stop',
    });
  }
  return issues;
}

/** The burst settings of a valid rule (undefined without debounce). */
export function burstSettingsOf(r: BurstRuleFields): BurstSettings | undefined {
  if (r.debounce === undefined) return undefined;
  return {
    debounceMs: r.debounce,
    maxWaitMs: r.max_wait ?? Math.min(r.debounce * DEFAULT_MAX_WAIT_FACTOR, MAX_WAIT_LIMIT_MS),
    unless: [...(r.unless ?? [])],
  };
}
