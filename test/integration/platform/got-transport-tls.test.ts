import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../../support/run-node.js';

/**
 * The platform is reached over HTTPS in production. The transport hands Node only the request
 * options that are set and builds got's native options itself (src/platform/got-native-options.ts),
 * so this checks, against a real TLS server on loopback, that a call over HTTPS still works and
 * that the server's certificate is still verified. The call runs in a child process because Node
 * reads NODE_EXTRA_CA_CERTS (the test certificate's authority) only at start-up.
 */
const fixture = (name: string) => new URL(`../../fixtures/tls/${name}`, import.meta.url);
const CERT_FILE = fileURLToPath(fixture('loopback-cert.pem'));
const TRANSPORT = fileURLToPath(new URL('../../../dist/platform/got-transport.js', import.meta.url));

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: Record<string, unknown>;
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer(
    { cert: readFileSync(fixture('loopback-cert.pem')), key: readFileSync(fixture('loopback-key.pem')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"success":true,"conversation_id":"conv_1"}');
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const CHILD = `
const { gotTransport } = await import(process.env.TRANSPORT);
try {
  const answer = await gotTransport({
    url: process.env.URL, method: 'POST', headers: { business: 'biz_1', secret: 's3cret' },
    json: { conversation_id: 'conv_1', text: 'halo' }, timeoutMs: 5000,
  });
  console.log(JSON.stringify({ ok: true, answer }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, name: error.name, errorCode: error.errorCode, timedOut: error.timedOut }));
}
process.exit(0);
`;

async function callInChild(url: string, extraCa: string | undefined): Promise<Record<string, unknown>> {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANSPORT, URL: url };
  delete env.NODE_EXTRA_CA_CERTS;
  if (extraCa) env.NODE_EXTRA_CA_CERTS = extraCa;
  const run = await runNode(['--input-type=module', '-e', CHILD], env, 20_000);
  const line = run.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`the child printed no result (exit ${run.code}): ${run.stdout} ${run.stderr}`);
  }
}

describe('the got transport over HTTPS', () => {
  it('calls a TLS server whose certificate it trusts: same request, same answer', async () => {
    seen.length = 0;
    const result = await callInChild(`${base}/v1/message`, CERT_FILE);
    expect(result).toEqual({
      ok: true,
      answer: { statusCode: 200, bodyText: '{"success":true,"conversation_id":"conv_1"}' },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/message' });
    expect(seen[0]?.headers).toMatchObject({
      business: 'biz_1',
      secret: 's3cret',
      'content-type': 'application/json',
      host: base.slice('https://'.length),
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ conversation_id: 'conv_1', text: 'halo' });
  });

  it('still verifies the certificate: an untrusted one fails the call before any request is sent', async () => {
    seen.length = 0;
    const result = await callInChild(`${base}/v1/message`, undefined);
    expect(result).toMatchObject({ ok: false, name: 'TransportFailure', timedOut: false });
    expect(String(result.errorCode)).toMatch(/SELF_SIGNED/);
    expect(seen).toHaveLength(0);
  });
});
