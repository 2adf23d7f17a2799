/**
 * A load for a bridge of several businesses (bench/businesses.ts): the shared harness's webhooks
 * and rule (../shared/peers, load.mjs: a keyword escalates with a note and need-human, anything
 * else gets the reply), sent to each business's own path with its own secret, and checked against
 * what the harness's fake API recorded. load.mjs itself sends every event to one URL with one
 * secret, so it cannot spread a load over businesses; the texts, the rule and the checks are its.
 */
import http from 'node:http';

const KEYWORD = /\b(refund|komplain|kecewa|marah)\b/i;
const REPLY = 'Terima kasih, pesan Anda sudah kami terima.';
const ESCALATE = [
  'Saya mau refund untuk pesanan #{o}, barangnya datang dalam keadaan rusak.',
  'Kak, saya mau komplain, paket #{o} belum sampai padahal sudah 5 hari.',
  'Jujur saya kecewa dengan pelayanannya, pesanan #{o} salah kirim warna.',
  'Saya marah sekali, sudah chat dari kemarin tidak ada yang balas!',
];
const ORDINARY = [
  'Halo kak, apakah produk ini masih ready stok?',
  'Berapa ongkir ke Surabaya untuk 2 kg?',
  'Apakah produk ini refundable kalau ukurannya tidak cocok?',
  'Kak, pesanan #{o} sudah dikirim belum ya?',
];

/** Where a business's webhooks go. */
export interface Target {
  url: string;
  secret: string;
}

export interface LoadEvent {
  conversation: string;
  body: Buffer;
  target: Target;
  expect: { note?: string; needHuman?: true; message?: string };
  /** CLOCK_MONOTONIC ms of the first send (the fake API's clock). */
  sentAt: number | null;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** `count` events, the i-th to `targetOf(i)`, conversations `<run>-<i>` (one per event). */
export function buildEvents(count: number, run: string, targetOf: (i: number) => Target): LoadEvent[] {
  const events: LoadEvent[] = [];
  for (let i = 0; i < count; i++) {
    const escalate = i % 10 < 3;
    const list = escalate ? ESCALATE : ORDINARY;
    const text = (list[i % list.length] as string).replace('{o}', String(100_000 + i));
    const conversation = `${run}-${i}`;
    const body = {
      event: 'channel.message_in',
      timestamp: Math.floor(Date.now() / 1000),
      conversation_id: conversation,
      conversation_label: `Customer ${i}`,
      need_human: 0,
      message: {
        id: `msg-${run}-${i}`,
        sender_name: `Customer ${i}`,
        channel: { id: 'ch_1', name: 'Telegram', engine: 'telegram' },
        bisnis: { id: 'biz_1', name: 'Toko' },
        user: { id: 'u_1', name: 'Owner' },
        content: { type: 'text', text },
      },
    };
    const keyword = KEYWORD.exec(text);
    events.push({
      conversation,
      body: Buffer.from(JSON.stringify(body)),
      target: targetOf(i),
      expect: keyword
        ? { note: `Escalated: keyword ${(keyword[1] as string).toLowerCase()}`, needHuman: true }
        : { message: REPLY },
      sentAt: null,
    });
  }
  return events;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(event: LoadEvent): Promise<number> {
  const url = new URL(event.target.url);
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: event.target.secret },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(event.body);
  });
}

/** Sends with `concurrency` in flight (closed loop); returns the statuses that were not 200. */
export async function sendClosedLoop(events: LoadEvent[], concurrency: number): Promise<number> {
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < events.length) {
      const event = events[next++] as LoadEvent;
      event.sentAt = nowMs();
      if ((await post(event)) !== 200) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return failed;
}

/** Sends at `perSecond` (open loop, each on time whatever the answers take); at most `maxInFlight`. */
export async function sendOpenLoop(
  events: LoadEvent[],
  perSecond: number,
  maxInFlight = 2_000,
): Promise<number> {
  const start = nowMs();
  let failed = 0;
  let inFlight = 0;
  const sends: Promise<void>[] = [];
  for (const [i, event] of events.entries()) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - nowMs();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight >= maxInFlight) {
      failed += 1;
      continue;
    }
    inFlight += 1;
    event.sentAt = nowMs();
    sends.push(
      post(event).then((status) => {
        inFlight -= 1;
        if (status !== 200) failed += 1;
      }),
    );
  }
  await Promise.all(sends);
  return failed;
}

interface Call {
  ep: string;
  t: number;
  ok: boolean;
  text?: string;
  note?: string;
}

export interface Checked {
  complete: number;
  missing: number;
  duplicated: number;
  wrong: number;
  /** ms from the first send to the last expected call, per complete event, sorted. */
  e2e: number[];
  firstSend: number;
  lastCall: number;
}

/** What the fake API saw, against what each event asks for (load.mjs's verify, per event). */
export function check(events: readonly LoadEvent[], conversations: Record<string, Call[]>): Checked {
  let complete = 0;
  let missing = 0;
  let duplicated = 0;
  let wrong = 0;
  let lastCall = 0;
  const e2e: number[] = [];
  for (const event of events) {
    const calls = (conversations[event.conversation] ?? []).filter((c) => c.ok);
    const wanted: [string, boolean, (c: Call) => boolean][] = [
      ['message', event.expect.message !== undefined, (c) => c.text === event.expect.message],
      [
        'note',
        event.expect.note !== undefined,
        (c) => c.note?.toLowerCase() === event.expect.note?.toLowerCase(),
      ],
      ['need-human', event.expect.needHuman === true, () => true],
    ];
    let done = true;
    let last = 0;
    for (const [ep, want, right] of wanted) {
      const got = calls.filter((c) => c.ep === ep);
      if (!want) {
        wrong += got.length;
        continue;
      }
      if (got.length === 0) {
        missing += 1;
        done = false;
        continue;
      }
      if (got.length > 1) duplicated += got.length - 1;
      const first = got.reduce((a, b) => (b.t < a.t ? b : a));
      if (!right(first)) wrong += 1;
      last = Math.max(last, first.t);
    }
    if (done && event.sentAt !== null) {
      complete += 1;
      e2e.push(last - event.sentAt);
      lastCall = Math.max(lastCall, last);
    }
  }
  e2e.sort((a, b) => a - b);
  const firstSend = Math.min(...events.map((e) => e.sentAt ?? Number.POSITIVE_INFINITY));
  return { complete, missing, duplicated, wrong, e2e, firstSend, lastCall };
}

/** The number of calls the events ask for. */
export function expectedCalls(events: readonly LoadEvent[]): number {
  return events.reduce((sum, e) => sum + (e.expect.message ? 1 : 2), 0);
}

export const percentile = (sorted: readonly number[], p: number): number | null =>
  sorted.length === 0
    ? null
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null);

/** Polls the fake API until every event is complete (or the deadline), then once more after `quietMs`. */
export async function waitForCalls(
  apiUrl: string,
  events: readonly LoadEvent[],
  timeoutMs: number,
  quietMs = 2_000,
): Promise<Checked> {
  const deadline = Date.now() + timeoutMs;
  const read = async () => {
    const stats = (await (await fetch(`${apiUrl}/_stats`)).json()) as {
      conversations: Record<string, Call[]>;
    };
    return check(events, stats.conversations);
  };
  let checked = await read();
  while (checked.complete < events.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    checked = await read();
  }
  // Exactly once is judged after a quiet period, not at the first sighting.
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  const settled = await read();
  return { ...settled, e2e: checked.e2e, lastCall: checked.lastCall };
}
