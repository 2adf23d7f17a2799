/**
 * Client CPU of one platform call: the project's transport (`gotTransport`, got with a prebuilt
 * instance and agentkeepalive) against a bare `node:http` request on a keep-alive Agent, both
 * POSTing the same JSON with the same headers to a node:http server in a CHILD process on loopback
 * (so the server's work is not in our figures). CPU is `process.cpuUsage()` of this process
 * (user + system, GC threads included) over the measured calls. Runs after a warm-up of both,
 * in alternating rounds (bare, got, bare, got) so a drift in machine load hits both alike.
 */
import { Agent, request } from 'node:http';
import { waitFor } from '../src/base/wait-for.js';
import { gotTransport, type HttpAnswer } from '../src/platform/got-transport.js';
import { round } from './peers-support.js';
import { spawnNode, stopChild } from './support.js';

/** The server: reads the body, answers like the platform's current form. Prints its port. */
const SERVER = `
import { createServer } from 'node:http';
const body = JSON.stringify({ conversation_id: 'conv_1', success: true });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log('port=' + server.address().port));
`;

const HEADERS = { business: 'biz_1', secret: 'api_secret_test' };
const PAYLOAD = { conversation_id: 'conv_1', text: 'Terima kasih, pesan Anda sudah kami terima.' };
const TIMEOUT_MS = 5_000;

function bareCall(agent: Agent, url: URL): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(PAYLOAD);
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          ...HEADERS,
          accept: 'application/json',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ statusCode: res.statusCode ?? 0, bodyText: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function measure(call: () => Promise<HttpAnswer>, count: number, inFlight: number) {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        next += 1;
        const answer = await call();
        if (answer.statusCode !== 200) throw new Error(`transport bench: HTTP ${answer.statusCode}`);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: cpu.user + cpu.system, wallMs: performance.now() - t0 };
}

export interface TransportCost {
  calls: number;
  inFlight: number;
  gotCpuUsPerCall: number;
  bareCpuUsPerCall: number;
  /** got's client CPU per call / bare node:http's. */
  ratio: number;
  gotWallUsPerCall: number;
  bareWallUsPerCall: number;
}

export async function runTransportCost(calls = 2_000, inFlight = 16): Promise<TransportCost> {
  const server = spawnNode(['--input-type=module', '-e', SERVER], {});
  try {
    const port = await waitFor(() => /port=(\d+)/.exec(server.output())?.[1], {
      timeoutMs: 10_000,
      what: `the transport bench server to listen: ${server.output()}`,
    });
    const url = new URL(`http://127.0.0.1:${port}/v1/message`);
    const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
    const viaGot = () =>
      gotTransport({ url: url.href, method: 'POST', headers: HEADERS, json: PAYLOAD, timeoutMs: TIMEOUT_MS });
    const viaBare = () => bareCall(agent, url);
    await measure(viaBare, 300, inFlight);
    await measure(viaGot, 300, inFlight);
    const half = Math.ceil(calls / 2);
    const totals = { got: { cpuUs: 0, wallMs: 0 }, bare: { cpuUs: 0, wallMs: 0 } };
    for (let round = 0; round < 2; round++) {
      for (const [name, call] of [
        ['bare', viaBare],
        ['got', viaGot],
      ] as const) {
        const m = await measure(call, half, inFlight);
        totals[name].cpuUs += m.cpuUs;
        totals[name].wallMs += m.wallMs;
      }
    }
    agent.destroy();
    const n = half * 2;
    const gotCpu = totals.got.cpuUs / n;
    const bareCpu = totals.bare.cpuUs / n;
    return {
      calls: n,
      inFlight,
      gotCpuUsPerCall: round(gotCpu, 1),
      bareCpuUsPerCall: round(bareCpu, 1),
      ratio: round(gotCpu / bareCpu, 2),
      gotWallUsPerCall: round((totals.got.wallMs * 1000) / n, 1),
      bareWallUsPerCall: round((totals.bare.wallMs * 1000) / n, 1),
    };
  } finally {
    await stopChild(server.child);
  }
}
