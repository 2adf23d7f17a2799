import { TEST_CLOCK_ENV } from '../../../src/bridge/test-clock.js';
import { createSeededRandom } from '../../../src/emulator/seeded-random.js';
import type { AdminConversationView } from '../support/admin-client.js';
import { messageOf } from '../support/expectations.js';
import { createFaultWorld, type FaultWorld } from '../support/fault-world.js';
import { check, percentile, type Scenario, seconds } from '../support/scenario.js';
import { createConversations, type PlannedConversation, sendMessages } from '../support/traffic.js';

const HOUR = 3_600_000;
const WINDOW_MS = 24 * HOUR;
/** worker.safety_margin (the default): free-form replies stop this long before the window closes. */
const MARGIN_MS = 60_000;
/** The webhook's `timestamp` is in whole seconds, so the bridge may see the message up to 1 s early. */
const RESOLUTION_MS = 1_000;
/**
 * The bridge's clock minus the platform's, one phase each (`CONVO_BRIDGE_TEST_CLOCK_OFFSET_MS` on
 * the `work` processes; the platform keeps the real time): none, within `worker.reconcile_skew`
 * (5 s) both ways, beyond it both ways (still within the margin, which is what absorbs a clock
 * difference for the window).
 */
const OFFSETS_MS = [0, 3_000, -3_000, 20_000, -20_000] as const;

type Band = 'edge' | 'inside' | 'outside';

interface Placed {
  conversationId: string;
  band: Band;
  /** When the customer wrote (epoch ms), as the emulator recorded it. */
  at: number;
  /** When the suite created the message (the webhook went out right after). */
  createdAt: number;
  messageId: string;
  /** The bridge's clock minus the platform's while this conversation was decided. */
  offsetMs: number;
}

/** "1.2 s..59.8 s" of a list of milliseconds, "-" when empty. */
function range(values: readonly number[]): string {
  if (values.length === 0) return '-';
  return `${seconds(Math.min(...values))}..${seconds(Math.max(...values))}`;
}

type Verdict = 'sent' | 'held' | 'blocked' | 'wrongly blocked' | 'sent outside' | 'anomaly';

/** Ages of the customer's last message: 70% within 10 minutes of the 24-hour edge, the rest far from it. */
function ageFor(random: () => number): { band: Band; ageMs: number } {
  const draw = random();
  if (draw < 0.7) return { band: 'edge', ageMs: WINDOW_MS - 10 * 60_000 + random() * 20 * 60_000 };
  if (draw < 0.85) return { band: 'inside', ageMs: HOUR + random() * 22 * HOUR };
  return { band: 'outside', ageMs: 25 * HOUR + random() * 47 * HOUR };
}

/** `work` processes whose clock runs `offsetMs` ahead of the platform's (behind when negative). */
async function workersWithOffset(world: FaultWorld, offsetMs: number): Promise<void> {
  await Promise.all(world.running('work').map((w) => w.stop('SIGTERM')));
  const env = offsetMs === 0 ? {} : { [TEST_CLOCK_ENV]: String(offsetMs) };
  await Promise.all([0, 1].map(() => world.launch('work', env)));
}

/**
 * 5. Clock and window: conversations on WhatsApp-API and Instagram whose customer last wrote
 * around 24 hours ago (and some far inside or far outside the window), each triggering the
 * after-hours free-form reply, in phases with the bridge's clock off the platform's by 0, ±3 s
 * and ±20 s. Runs through the real processes: the emulator marks a free-form send outside the
 * window `failed`, the worker decides with its (shifted) clock and safety margin. Judged on the
 * platform's clock only: zero sends outside the window, and zero wrongly blocked replies: a hold
 * is right when, at the platform's time of the hold note, at most the margin plus the bridge's
 * lead (plus the webhook's 1 s timestamp resolution) was left.
 */
export const clockWindow: Scenario = {
  id: 5,
  name: 'Clock and window',
  budgetMs: (scale) => (scale === 'full' ? 20 * 60_000 : 180_000),
  async run(scale, { log, signal }) {
    const count = scale === 'full' ? 10_000 : 1_000;
    const random = createSeededRandom(606);
    const conversations: PlannedConversation[] = Array.from({ length: count }, (_, i) => ({
      id: `cw-${String(i).padStart(5, '0')}`,
      channel: i % 2 === 0 ? { type: 'whatsapp_api', id: 'ch_waba_1' } : { type: 'instagram', id: 'ch_ig' },
    }));
    const plan = conversations.map((c) => ({ message: messageOf(c.id, 'neutral', 0), ...ageFor(random) }));
    const world = await createFaultWorld({
      config: { hours: 'closed' },
      processes: ['serve'],
      randomSeed: 606,
      signal,
    });
    try {
      await createConversations(world.admin, conversations, 'Sari');
      log(`${count} conversations created`);
      const placed: Placed[] = [];
      const started = Date.now();
      const perPhase = Math.ceil(count / OFFSETS_MS.length);
      for (const [phase, offsetMs] of OFFSETS_MS.entries()) {
        await workersWithOffset(world, offsetMs);
        const slice = plan.slice(phase * perPhase, (phase + 1) * perPhase);
        const atByIndex: number[] = [];
        const createdByIndex: number[] = [];
        await sendMessages(
          world.admin,
          slice.map((p) => p.message),
          {
            concurrency: 8,
            ratePerSecond: 80,
            // The age is applied at the moment of sending, so "23 h 59 m ago" means just that.
            at: (_message, i) => {
              createdByIndex[i] = Date.now();
              atByIndex[i] = createdByIndex[i] - (slice[i]?.ageMs ?? 0);
              return atByIndex[i];
            },
            onSent: (message, i) => {
              const entry = slice[i];
              const at = atByIndex[i];
              const createdAt = createdByIndex[i];
              if (!entry || at === undefined || createdAt === undefined) return;
              placed.push({
                conversationId: message.conversationId,
                band: entry.band,
                at,
                createdAt,
                messageId: message.messageId,
                offsetMs,
              });
            },
          },
        );
        await world.settle(120_000 + slice.length * 60, `the bridge (clock ${offsetMs} ms off) to decide`);
        log(`phase ${phase + 1}: bridge clock ${offsetMs} ms off, ${slice.length} conversations decided`);
      }
      log(`${placed.length} messages sent in ${Date.now() - started} ms`);

      const views = new Map<string, AdminConversationView>(
        (await world.admin.conversations()).map((v) => [v.id, v]),
      );
      const byOffset = new Map<number, { held: number[]; sent: number[] }>(
        OFFSETS_MS.map((o) => [o, { held: [], sent: [] }]),
      );
      const verdicts = new Map<Verdict, number>();
      const problems: string[] = [];
      const leftAtSend: number[] = [];
      const leftAtHold: number[] = [];
      const delays: number[] = [];
      let wrongBand = 0;
      for (const p of placed) {
        const view = views.get(p.conversationId);
        const closes = p.at + WINDOW_MS;
        const last = view?.lastMessage;
        let verdict: Verdict = 'anomaly';
        const phase = byOffset.get(p.offsetMs);
        if (view && view.messageCount === 2 && last?.origin === 'api') {
          const sentAt = Date.parse(last.sentAtIso);
          delays.push(sentAt - p.createdAt);
          leftAtSend.push(closes - sentAt);
          phase?.sent.push(closes - sentAt);
          verdict = last.deliveryStatus === 'failed' || sentAt > closes ? 'sent outside' : 'sent';
        } else if (view && view.messageCount === 2 && last?.origin === 'note' && view.needHuman) {
          // The platform's time of the hold note: the decision came just before it, so the time left
          // then was at least this (the processing delay, measured below, is the difference). A
          // bridge clock ahead by d holds up to d early, one behind holds d later.
          const heldAt = Date.parse(last.sentAtIso);
          const left = closes - heldAt;
          delays.push(heldAt - p.createdAt);
          if (left > MARGIN_MS + p.offsetMs + RESOLUTION_MS) verdict = 'wrongly blocked';
          else if (left > 0) {
            verdict = 'held';
            leftAtHold.push(left);
            phase?.held.push(left);
          } else verdict = 'blocked';
        }
        verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
        const expectedOk =
          (p.band === 'inside' && verdict === 'sent') ||
          (p.band === 'outside' && verdict === 'blocked') ||
          p.band === 'edge';
        if (!expectedOk) wrongBand += 1;
        if (
          (verdict === 'anomaly' || verdict === 'wrongly blocked' || verdict === 'sent outside') &&
          problems.length < 10
        ) {
          problems.push(
            `${p.conversationId}: ${verdict} (bridge clock ${p.offsetMs} ms off; ${view?.messageCount ?? '?'} messages, last ${last?.origin ?? 'none'} ${last?.deliveryStatus ?? ''}, customer wrote ${new Date(p.at).toISOString()})`,
          );
        }
      }
      const n = (v: Verdict) => verdicts.get(v) ?? 0;
      check(problems, placed.length === count, `only ${placed.length} of ${count} messages were sent`);
      check(
        problems,
        n('sent outside') === 0,
        `${n('sent outside')} free-form replies sent outside the window`,
      );
      check(
        problems,
        n('wrongly blocked') === 0,
        `${n('wrongly blocked')} replies held with more than the margin (+ the bridge's lead) left on the platform's clock`,
      );
      check(
        problems,
        n('anomaly') === 0,
        `${n('anomaly')} conversations neither answered once nor held once`,
      );
      check(problems, wrongBand === 0, `${wrongBand} conversations far from the edge got the wrong outcome`);
      check(problems, n('held') > 0, 'no reply was held by the safety margin: the edge was not exercised');
      const deadLetters = await world.deadLetters();
      check(problems, deadLetters === 0, `${deadLetters} dead letters`);
      const edge = placed.filter((p) => p.band === 'edge').length;
      return {
        scale: `${count} conversations (${edge} within 10 min of the 24 h edge)`,
        figures: {
          sent: `${n('sent')} (left ${range(leftAtSend)} when sent)`,
          'held by safety margin': `${n('held')} (left ${range(leftAtHold)} when held)`,
          'blocked, window closed': n('blocked'),
          'wrongly blocked': n('wrongly blocked'),
          'sent outside window': n('sent outside'),
          'per bridge clock offset (held: most left; sent: least left)': [...byOffset.entries()]
            .map(
              ([o, v]) =>
                `${o >= 0 ? '+' : ''}${o / 1000} s: held ${v.held.length} (${v.held.length ? seconds(Math.max(...v.held)) : '-'}), sent ${v.sent.length} (${v.sent.length ? seconds(Math.min(...v.sent)) : '-'})`,
            )
            .join('; '),
          'processing delay p50/max': `${seconds(percentile(delays, 50))}/${seconds(Math.max(0, ...delays))}`,
          'dead letters': deadLetters,
        },
        expected: `bridge clock 0, ±3 s, ±20 s off: 0 sent outside, 0 held with > ${seconds(MARGIN_MS)} + the bridge's lead + 1 s left (platform clock), far-from-edge all right`,
        passed: problems.length === 0,
        problems,
        worst: {
          'least time left at a send': leftAtSend.length > 0 ? seconds(Math.min(...leftAtSend)) : '-',
          'most time left at a hold': seconds(Math.max(0, ...leftAtHold)),
          'slowest decision after the message': seconds(Math.max(0, ...delays)),
        },
      };
    } finally {
      await world.close();
    }
  },
};
