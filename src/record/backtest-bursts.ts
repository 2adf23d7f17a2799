import type { ConversationEvent } from '../events/conversation-event.js';
import { addToBurst, type Burst, burstDueAt, messageTime, startBurst } from '../rules/burst.js';
import type { CompiledRule, CompiledRules } from '../rules/compile-rules.js';

/** An open burst of one debounced rule, and the summary of its last message (where its plan is told). */
interface OpenBurst<S> {
  rule: CompiledRule;
  burst: Burst;
  due: number;
  summary: S;
}

/**
 * The debounced rules of one conversation in a backtest, as the worker keeps them: the
 * recorded customer messages are grouped again into bursts by when each was received; a burst ends
 * at its due time (quiet for the debounce, or max_wait after it began), and the rule is then
 * evaluated by `onEnd`. An event of a kind in the rule's `unless` cancels its open burst. The
 * plan of a burst is told with the burst's last message (there is no event of its own).
 *
 * The approximation: the worker lets a message that arrives after the due time but before the
 * burst's job took it join the burst (milliseconds, or a backlog's length); here the due time is
 * exact. Bursts still open when the recording ends are evaluated at their due time, as if the
 * customer wrote nothing more.
 */
export class BurstSimulation<S> {
  private readonly open = new Map<number, OpenBurst<S>>();

  constructor(
    private readonly rules: CompiledRules,
    private readonly onEnd: (rule: CompiledRule, burst: Burst, at: number, summary: S) => void,
  ) {}

  /** Ends the bursts due by `until` (ms), earliest first. */
  endDue(until: number): void {
    const due = [...this.open.entries()]
      .filter(([, o]) => o.due <= until)
      .sort(([ia, a], [ib, b]) => a.due - b.due || ia - ib);
    for (const [index, o] of due) {
      this.open.delete(index);
      this.onEnd(o.rule, o.burst, o.due, o.summary);
    }
  }

  /** Ends every open burst (the recording is over). */
  endAll(): void {
    this.endDue(Number.POSITIVE_INFINITY);
  }

  /** An event: it cancels the bursts whose `unless` names its kind; a customer message joins or begins each burst. */
  onEvent(event: ConversationEvent, summary: S): void {
    for (const [index, o] of this.open) {
      if (o.rule.burst?.unless.includes(event.kind)) this.open.delete(index);
    }
    if (event.kind !== 'message_in') return;
    for (const index of this.rules.bursts) {
      const rule = this.rules.rules[index];
      if (!rule?.burst) continue;
      const current = this.open.get(index);
      const burst = current ? addToBurst(current.burst, event) : startBurst(event);
      const due = burstDueAt(
        rule.burst,
        Date.parse(burst.firstAt),
        Math.max(messageTime(event), Date.parse(burst.lastAt)),
      );
      this.open.set(index, { rule, burst, due, summary });
    }
  }
}
