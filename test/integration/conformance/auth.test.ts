import { describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../../src/platform/create-platform-client.js';
import {
  BUSINESS_ID,
  clientFor,
  expectedErrorReply,
  FAST_RETRY,
  FORMS,
  type Form,
  INVALID_DATA_TEXT,
  platformErrorOf,
  raw,
  requestsSeen,
  type Scheme,
  SECRET,
  useEmulator,
} from './conformance-kit.js';

/*
 * Authentication (messaging-service-interface.md, "Authentication"): which of the client's schemes
 * each form of the emulator accepts, and that every refusal reaches the caller as AUTH with the
 * spec's envelope (`status` 0, `rc` 401, the invalid-data text). The spec does not say whether a
 * form accepts the other form's credentials; the emulator is strict (it does not), the client
 * tolerant (it lets you configure any scheme with any form).
 */

interface AuthRow {
  readonly name: string;
  readonly scheme: Scheme;
  readonly businessId?: string;
  readonly secret?: string;
  /** What the emulator logs: the scheme it accepted, or why it refused. */
  readonly logged: string;
}

const ACCEPTED: Record<Form, AuthRow[]> = {
  current: [
    { name: 'Business + Secret headers', scheme: 'headers', logged: 'business-headers' },
    { name: 'encoded bearer base64(id:secret)', scheme: 'bearer', logged: 'encoded-bearer' },
  ],
  earlier: [{ name: 'plain bearer <secret>', scheme: 'bearer-secret', logged: 'plain-bearer' }],
};

const REFUSED: Record<Form, AuthRow[]> = {
  current: [
    {
      name: 'the earlier form’s plain bearer',
      scheme: 'bearer-secret',
      logged: 'bearer is not base64 of business_id:secret',
    },
    { name: 'headers with a wrong secret', scheme: 'headers', secret: 'sk-wrong', logged: 'wrong Secret' },
    {
      name: 'headers with a wrong business id',
      scheme: 'headers',
      businessId: 'biz-other',
      logged: 'unknown Business id',
    },
    {
      name: 'bearer with a wrong secret',
      scheme: 'bearer',
      secret: 'sk-wrong',
      logged: 'wrong secret in bearer',
    },
    {
      name: 'bearer with a wrong business id',
      scheme: 'bearer',
      businessId: 'biz-other',
      logged: 'unknown business id in bearer',
    },
  ],
  earlier: [
    { name: 'the current form’s Business + Secret headers', scheme: 'headers', logged: 'no credentials' },
    { name: 'the current form’s encoded bearer', scheme: 'bearer', logged: 'wrong secret in bearer' },
    {
      name: 'plain bearer with a wrong secret',
      scheme: 'bearer-secret',
      secret: 'sk-wrong',
      logged: 'wrong secret in bearer',
    },
  ],
};

type Call = readonly [string, (client: PlatformClient) => Promise<unknown>];
/** Every operation that needs credentials (GET /version does not: see the last test). */
const CALLS: readonly Call[] = [
  ['sendMessage', (client) => client.sendMessage({ conversationId: 'conv-1', text: 'Halo' })],
  ['getMessages', (client) => client.getMessages('conv-1')],
  ['addNote', (client) => client.addNote('conv-1', 'catatan')],
  ['markNeedHuman', (client) => client.markNeedHuman('conv-1')],
  ['getNeedHumanTotal', (client) => client.getNeedHumanTotal()],
];

describe.each(FORMS)('authentication, %s form', (form) => {
  const emulator = useEmulator(form);
  const seed = () => emulator().admin.createConversation({ id: 'conv-1' });
  const options = (row: AuthRow) => ({
    scheme: row.scheme,
    ...(row.businessId === undefined ? {} : { businessId: row.businessId }),
    ...(row.secret === undefined ? {} : { secret: row.secret }),
  });

  it.each(ACCEPTED[form].flatMap((row) => CALLS.map(([operation, run]) => ({ ...row, operation, run }))))(
    'accepts $name on $operation',
    async (row) => {
      seed();
      await row.run(clientFor(emulator(), options(row)));
      const [request, ...more] = requestsSeen(emulator());
      expect(more).toEqual([]);
      expect(request).toMatchObject({ authenticated: true, auth: row.logged, httpStatus: 200, rc: null });
    },
  );

  it.each(REFUSED[form])('refuses $name: AUTH, not retried, nothing done', async (row) => {
    seed();
    const error = await platformErrorOf(
      clientFor(emulator(), options(row)).sendMessage({ conversationId: 'conv-1', text: 'Halo' }),
      'AUTH',
    );

    // Spec, Errors: "Authentication failure | status 0, rc 401"; current form over HTTP 200.
    expect(error).toMatchObject({
      retryable: false,
      attempts: 1,
      statusCode: form === 'current' ? 200 : 401,
      rc: 401,
      platformMessage: INVALID_DATA_TEXT,
    });
    expect(requestsSeen(emulator())).toMatchObject([
      { authenticated: false, auth: row.logged, httpStatus: form === 'current' ? 200 : 401, rc: 401 },
    ]);
    expect(emulator().admin.conversation('conv-1').messageCount).toBe(0);
  });

  it.each(CALLS)('a wrong secret on %s is AUTH, with one request', async (_operation, run) => {
    seed();
    await platformErrorOf(run(clientFor(emulator(), { secret: 'sk-wrong' })), 'AUTH');
    expect(requestsSeen(emulator())).toMatchObject([{ authenticated: false, rc: 401 }]);
  });

  if (form === 'earlier') {
    it('a wrong business id on the history call (sent as merchant_id) is AUTH', async () => {
      seed();
      const error = await platformErrorOf(
        clientFor(emulator(), { businessId: 'biz-other' }).getMessages('conv-1'),
        'AUTH',
      );
      expect(error).toMatchObject({ attempts: 1, statusCode: 401, rc: 401 });
      expect(requestsSeen(emulator())).toMatchObject([
        { endpoint: 'history', authenticated: false, auth: 'unknown merchant_id', httpStatus: 401 },
      ]);
    });

    it('a client without a business id reads the history with the bearer and secret_key alone', async () => {
      seed();
      const client = createPlatformClient({
        baseUrl: emulator().url,
        form: 'earlier',
        auth: { scheme: 'bearer-secret', secret: SECRET },
        retry: FAST_RETRY,
      });
      expect((await client.getMessages('conv-1')).messages).toEqual([]);
      expect(requestsSeen(emulator())).toMatchObject([{ authenticated: true, auth: 'plain-bearer' }]);
    });

    it('the plain bearer carries no business id, so other calls do not depend on it', async () => {
      seed();
      await clientFor(emulator(), { businessId: 'biz-other' }).sendMessage({
        conversationId: 'conv-1',
        text: 'Halo',
      });
      expect(requestsSeen(emulator())).toMatchObject([{ authenticated: true, auth: 'plain-bearer' }]);
    });

    it('the history call also takes merchant_id + secret_key alone (raw request)', async () => {
      seed();
      const answer = await raw(emulator(), 'GET', '/v1/message/conv-1', {
        nativeAuth: false,
        headers: { merchant_id: BUSINESS_ID, secret_key: SECRET },
      });
      expect(answer).toMatchObject({ status: 200, json: { status: 1 } });
      expect(requestsSeen(emulator())).toMatchObject([{ auth: 'merchant-headers' }]);
    });
  }

  // Spec, Authentication rule 1: no Authorization header, an invalid Secret Key, or a malformed
  // header (no space after `Bearer`) fails. The client never sends these, so raw requests.
  const bearerToken =
    form === 'current' ? Buffer.from(`${BUSINESS_ID}:${SECRET}`).toString('base64') : SECRET;
  it.each([
    ['no credentials at all', {}],
    ['no space after Bearer', { Authorization: `Bearer${bearerToken}` }],
    ['Bearer with nothing after it', { Authorization: 'Bearer ' }],
    ['another scheme word', { Authorization: `Basic ${bearerToken}` }],
    ['the token without a scheme word', { Authorization: bearerToken }],
  ])('raw request with %s: status 0, rc 401, the invalid-data text', async (_what, headers) => {
    const answer = await fetch(`${emulator().url}/v1/conversation/need-human/total`, { headers });
    const expected = expectedErrorReply(form, 401, INVALID_DATA_TEXT);
    expect(answer.status).toBe(expected.status);
    expect(await answer.json()).toEqual(expected.json);
  });

  it('an auth storm (the secret rotated on the platform): AUTH until it ends, then fine again', async () => {
    seed();
    const client = clientFor(emulator());
    emulator().admin.setAuthStorm(true);
    await platformErrorOf(client.markNeedHuman('conv-1'), 'AUTH');
    emulator().admin.setAuthStorm(false);
    await client.markNeedHuman('conv-1');
    expect(requestsSeen(emulator()).map((r) => [r.authenticated, r.rc])).toEqual([
      [false, 401],
      [true, null],
    ]);
  });

  it('GET /version needs no valid credentials (the emulator’s choice; the spec does not say)', async () => {
    expect(await clientFor(emulator(), { secret: 'sk-wrong' }).getVersion()).toBe('1.3');
    expect(requestsSeen(emulator())).toMatchObject([
      { endpoint: 'version', authenticated: false, httpStatus: 200 },
    ]);
  });
});
