import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { waitFor } from '../../src/base/wait-for.js';
import { findFreePort } from '../../src/redis/start-redis-server.js';

/** The alerting rules users load (issue 29). */
export const ALERTS_FILE = join(process.cwd(), 'deploy', 'prometheus', 'alerts.yml');

/** One alert as Prometheus's /api/v1/alerts lists it (pending or firing; resolved ones leave the list). */
export interface ActiveAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export interface PrometheusOptions {
  /** `host:port` of each /metrics to scrape, as job `convo-bridge`. */
  targets: string[];
  /**
   * `for:` of every rule of alerts.yml in the copy Prometheus loads (e.g. '1s'), so that a test
   * need not wait out minutes; the expressions, labels and annotations are the file's own.
   */
  ruleFor?: string;
}

export interface PrometheusServer {
  readonly url: string;
  readonly logs: string[];
  alerts(): Promise<ActiveAlert[]>;
  /** An instant query's samples (value as a number). */
  query(promql: string): Promise<{ labels: Record<string, string>; value: number }[]>;
  close(): Promise<void>;
}

/** The rules of alerts.yml with another `for:` on each rule (the file itself is not touched). */
async function rulesWithFor(ruleFor: string | undefined): Promise<string> {
  const text = await readFile(ALERTS_FILE, 'utf8');
  if (ruleFor === undefined) return text;
  const doc = parse(text) as { groups: { rules: { for?: string }[] }[] };
  for (const group of doc.groups) for (const rule of group.rules) rule.for = ruleFor;
  return stringify(doc);
}

/**
 * A real Prometheus server (Debian's `prometheus` package, installed by `npm run test:tools`) on
 * a free loopback port with a temp data dir, scraping `targets` every second and evaluating
 * alerts.yml every second.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'prometheus-'));
  const rules = join(dir, 'alerts.yml');
  await writeFile(rules, await rulesWithFor(options.ruleFor));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: [rules],
    scrape_configs: [{ job_name: 'convo-bridge', static_configs: [{ targets: options.targets }] }],
  };
  await writeFile(join(dir, 'prometheus.yml'), stringify(config));
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean));
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const close = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`prometheus exited early:\n${logs.join('\n')}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
    },
    { timeoutMs: 20_000, what: 'Prometheus to be ready' },
  ).catch(async (error: unknown) => {
    await close();
    throw new Error(`${String(error)}\n--- prometheus output ---\n${logs.join('\n')}`);
  });
  return {
    url,
    logs,
    alerts: async () => (await get<{ alerts: ActiveAlert[] }>('/api/v1/alerts')).alerts,
    query: async (promql) =>
      (
        await get<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `/api/v1/query?query=${encodeURIComponent(promql)}`,
        )
      ).result.map((sample) => ({ labels: sample.metric, value: Number(sample.value[1]) })),
    close,
  };
}
