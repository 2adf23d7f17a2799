import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFakePlatform, listenOnLoopback } from '../../../bench/fake-platform.js';
import { HarnessMissingError, requireHarness, startOwnFakePlatform } from '../../../bench/peers-support.js';
import { stopChild } from '../../../bench/support.js';
import { findFreePort } from '../../../src/redis/start-redis-server.js';

/**
 * The benches that use the side-by-side harness say at once that it is missing and where it is
 * expected (they used to wait 20 s for a fake API that could not start), and the ones that need
 * only a fake platform run on the project's own (bench/fake-platform.ts). No benchmark is run: the
 * harness's location is pointed at an empty folder.
 */
describe('the side-by-side harness, when it is not there', () => {
  let empty: string;
  beforeAll(async () => {
    empty = await mkdtemp(join(tmpdir(), 'no-harness-'));
  });
  afterAll(async () => {
    await rm(empty, { recursive: true, force: true });
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('requireHarness names the folder, what is missing and how to point at a copy', async () => {
    const gone = join(empty, 'peers');
    expect(() => requireHarness('bench:cost', ['fake-api.mjs', 'load.mjs'], gone)).toThrow(
      new HarnessMissingError(
        `bench:cost needs the side-by-side harness (fake-api.mjs, load.mjs), and ${gone} does not exist. The benches look for it in ../shared/peers from the project root (the workspace's shared folder); set PEERS_HARNESS_DIR=DIR to point at a copy. bench:businesses, bench:forget, bench:rules, bench:ingest, bench:e2e and bench:rate need no harness.`,
      ),
    );
    await writeFile(join(empty, 'fake-api.mjs'), '');
    try {
      expect(() => requireHarness('bench:cost', ['fake-api.mjs', 'load.mjs'], empty)).toThrow(
        `${empty} lacks load.mjs.`,
      );
      expect(() => requireHarness('bench:x', ['fake-api.mjs'], empty)).not.toThrow();
    } finally {
      await rm(join(empty, 'fake-api.mjs'));
    }
  });

  it.each([
    ['startFakeApi', 'fake-api.mjs'],
    ['runLoad', 'load.mjs'],
    ['writeLoopbackBridgeConfig', 'bridge.yaml'],
  ] as const)('%s with PEERS_HARNESS_DIR empty fails at once, naming %s', async (name, file) => {
    vi.stubEnv('PEERS_HARNESS_DIR', empty);
    const support = await import('../../../bench/peers-support.js');
    const started = Date.now();
    const call = async () => {
      if (name === 'startFakeApi') await support.startFakeApi(await findFreePort());
      else if (name === 'runLoad') await support.runLoad(['-n', '1'], 5_000);
      else await support.writeLoopbackBridgeConfig(empty);
    };
    await expect(call()).rejects.toThrow(`${empty} lacks ${file}`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('every bench that uses the harness checks it first (exitUnlessHarness)', async () => {
    const uses = /\b(runLoad|startFakeApi|writeLoopbackBridgeConfig|startBridgeStack|HARNESS_DIR)\b/;
    const files = (await readdir('bench')).filter((f) => f.endsWith('.ts') && f !== 'peers-support.ts');
    const unchecked: string[] = [];
    for (const file of files) {
      const source = await readFile(join('bench', file), 'utf8');
      const imported = /import \{[^}]*\} from '\.\/peers-support\.js'/.exec(source)?.[0] ?? '';
      if (uses.test(imported) && !source.includes('exitUnlessHarness(')) unchecked.push(file);
    }
    expect(unchecked).toEqual([]);
    // bench:businesses needs no harness: its platform is the project's own fake.
    const businesses = await readFile('bench/businesses.ts', 'utf8');
    expect(businesses).not.toMatch(/startFakeApi|runLoad|HARNESS_DIR/);
    expect(businesses).toContain('startOwnFakePlatform(');
  });
});

describe("the benches' own fake platform", () => {
  let server: Server;
  let url: string;
  const account = { business: 'biz_1', secret: 'api_secret_test' };
  beforeAll(async () => {
    server = createFakePlatform({ expect: account });
    url = `http://127.0.0.1:${await listenOnLoopback(server, 0)}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = async (path: string, body: unknown, headers: Record<string, string>) =>
    (await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }).then((r) => r.json())) as Record<string, unknown>;
  const bearer = (b: string, s: string) => ({
    authorization: `Bearer ${Buffer.from(`${b}:${s}`).toString('base64')}`,
  });

  it("answers and records as the harness's fake API does, refusing other credentials", async () => {
    const good = { business: account.business, secret: account.secret };
    expect(await post('/v1/message', { conversation_id: 'c1', text: 'halo' }, good)).toEqual({
      conversation_id: 'c1',
      success: true,
    });
    expect(
      await post('/v1/note', { conversation_id: 'c1', note: 'n' }, bearer(account.business, account.secret)),
    ).toEqual({ message_id: 'n-1', success: true });
    expect(await post('/v1/conversation/need-human', { conversation_id: 'c1' }, good)).toEqual({
      success: true,
      conversation_id: 'c1',
    });
    expect(
      await post('/v1/note', { conversation_id: 'c1', note: 'n' }, { ...good, secret: 'wrong' }),
    ).toEqual({
      status: 0,
      rc: 401,
      error_msg: 'Data tidak valid. Mohon periksa kembali parameter dan header',
    });
    expect(await post('/v1/message', { conversation_id: 'c1' }, good)).toMatchObject({ rc: 400 });
    const stats = (await fetch(`${url}/_stats`).then((r) => r.json())) as {
      ok: number;
      unauthorized: number;
      invalid: number;
      conversations: Record<string, { ep: string; ok: boolean; t: number; text?: string }[]>;
    };
    expect(stats).toMatchObject({ ok: 3, unauthorized: 1, invalid: 1 });
    expect(stats.conversations.c1?.map((c) => [c.ep, c.ok])).toEqual([
      ['message', true],
      ['note', true],
      ['need-human', true],
      ['note', false],
      ['message', false],
    ]);
    expect(stats.conversations.c1?.[0]?.text).toBe('halo');
    const history = (await fetch(`${url}/v1/message/c1?limit=1`, { headers: good }).then((r) =>
      r.json(),
    )) as {
      data: { list: { message: string }[]; last_id: number };
    };
    expect(history.data).toMatchObject({ list: [{ message: 'halo' }], last_id: 1 });
    expect(await post('/_reset', {}, {})).toEqual({ reset: true });
    expect(await fetch(`${url}/_stats?summary=1`).then((r) => r.json())).toMatchObject({ total: 0 });
  });

  it('starts as a child process for the benches (startOwnFakePlatform)', async () => {
    const api = await startOwnFakePlatform(await findFreePort());
    try {
      expect(await fetch(`${api.url}/version`).then((r) => r.json())).toEqual({ version: 'v1.3' });
    } finally {
      await stopChild(api.child);
    }
  });
});
