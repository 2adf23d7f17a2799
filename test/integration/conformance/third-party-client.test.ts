import { describe, expect, it } from 'vitest';
import { BUSINESS_ID, INVALID_DATA_TEXT, raw, requestsSeen, SECRET, useEmulator } from './conformance-kit.js';

/*
 * A public third-party client of the platform (issue 29, item 4): a workflow tool's community node.
 * Its requests, as its source builds them against the current form (each operation with each of
 * its three credential types):
 *   - "Business & Secret":        `Business` + `Secret` headers on send, note, need-human, total;
 *   - "Bearer Token":             `Authorization: Bearer <token>`, the token being
 *                                 base64(business_id:secret) as the platform's own docs say;
 *   - "Merchant ID & Secret Key": `merchant_id` + `secret_key`, the only credentials its history
 *                                 call ("Get All") sends (with the other two it refuses to send
 *                                 it); on its other operations this type sends no credentials.
 * Sends carry `{conversation_id, text}` or `{conversation_id, media: {url, type, mime_type,
 * caption}}` (caption '' when none, mime_type typed by the user, image/jpeg by default), notes
 * `{conversation_id, note}`, need-human `{conversation_id}`; GETs no query and no body.
 *
 * The emulator's answers are those docs/conformance.md states ("Ambiguous readings": merchant
 * headers on the current form's history call are accepted, as the live service does for this
 * client; a request without credentials is refused, Authentication rule 1).
 */

const CONVERSATION = 'conv-3p';
const TOKEN = Buffer.from(`${BUSINESS_ID}:${SECRET}`).toString('base64');

const CREDENTIALS = {
  'Business & Secret': { Business: BUSINESS_ID, Secret: SECRET },
  'Bearer Token': { Authorization: `Bearer ${TOKEN}` },
  'Merchant ID & Secret Key': { merchant_id: BUSINESS_ID, secret_key: SECRET },
} as const;
type CredentialType = keyof typeof CREDENTIALS;

/** What the emulator logs as the scheme it recognised. */
const LOGGED: Record<CredentialType, string> = {
  'Business & Secret': 'business-headers',
  'Bearer Token': 'encoded-bearer',
  'Merchant ID & Secret Key': 'merchant-headers',
};

interface Operation {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: Record<string, unknown>;
  /** The success body of the current form. */
  readonly answer: Record<string, unknown>;
}

const media = (type: string, mimeType: string, caption = '') => ({
  conversation_id: CONVERSATION,
  media: { url: `https://cdn.example.com/file.${type}`, type, mime_type: mimeType, caption },
});
const sent = { conversation_id: CONVERSATION, success: true };

/** Every operation the node has but history, as it sends them. */
const OPERATIONS: readonly Operation[] = [
  {
    name: 'send text',
    method: 'POST',
    path: '/v1/message',
    body: { conversation_id: CONVERSATION, text: 'Halo dari workflow' },
    answer: sent,
  },
  {
    name: 'send image (the node’s default MIME type, no caption)',
    method: 'POST',
    path: '/v1/message',
    body: media('image', 'image/jpeg'),
    answer: sent,
  },
  {
    name: 'send video with a caption',
    method: 'POST',
    path: '/v1/message',
    body: media('video', 'video/mp4', 'Video produk'),
    answer: sent,
  },
  {
    name: 'send audio',
    method: 'POST',
    path: '/v1/message',
    body: media('audio', 'audio/mp3'),
    answer: sent,
  },
  {
    name: 'send document',
    method: 'POST',
    path: '/v1/message',
    body: media('document', 'text/plain'),
    answer: sent,
  },
  {
    name: 'create note',
    method: 'POST',
    path: '/v1/note',
    body: { conversation_id: CONVERSATION, note: 'Catatan dari workflow' },
    answer: { message_id: expect.any(String), success: true },
  },
  {
    name: 'mark need human',
    method: 'POST',
    path: '/v1/conversation/need-human',
    body: { conversation_id: CONVERSATION },
    answer: { success: true, conversation_id: CONVERSATION },
  },
  {
    name: 'get need-human total',
    method: 'GET',
    path: '/v1/conversation/need-human/total',
    answer: { status: 1, data: { total: 0 } },
  },
];

/** Headers the node's HTTP helper adds to every request (json: true). */
const jsonHeaders = (operation: Pick<Operation, 'body'>) => ({
  accept: 'application/json',
  ...(operation.body === undefined ? {} : { 'content-type': 'application/json' }),
});

describe('a third-party client (a workflow tool’s community node), current form', () => {
  const emulator = useEmulator('current');
  const seed = () => emulator().admin.createConversation({ id: CONVERSATION, channel: { type: 'telegram' } });
  const send = (operation: Omit<Operation, 'answer' | 'name'>, credentials: Record<string, string>) =>
    raw(emulator(), operation.method, operation.path, {
      nativeAuth: false,
      headers: { ...jsonHeaders(operation), ...credentials },
      ...(operation.body === undefined ? {} : { body: operation.body }),
    });

  const accepted = (['Business & Secret', 'Bearer Token'] as const).flatMap((type) =>
    OPERATIONS.map((operation) => ({ ...operation, type })),
  );
  it.each(accepted)('accepts $name with its "$type" credentials', async (row) => {
    seed();
    const answer = await send(row, CREDENTIALS[row.type]);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject(row.answer);
    expect(requestsSeen(emulator())).toMatchObject([
      { authenticated: true, auth: LOGGED[row.type], httpStatus: 200, rc: null },
    ]);
  });

  it('accepts its history call, which carries merchant_id + secret_key only (the current envelope)', async () => {
    seed();
    await send(OPERATIONS[0] as Operation, CREDENTIALS['Business & Secret']);
    const answer = await send(
      { method: 'GET', path: `/v1/message/${CONVERSATION}` },
      CREDENTIALS['Merchant ID & Secret Key'],
    );
    expect(answer.status).toBe(200);
    // Interface, GET /v1/message, "Response, current form": the credentials do not change the form.
    expect(answer.json).toMatchObject({
      status: 1,
      rc: 200,
      data: { list: [{ conversation_id: CONVERSATION, sender: 'agent', message: 'Halo dari workflow' }] },
      ts: expect.any(Number),
    });
    expect(requestsSeen(emulator())[1]).toMatchObject({
      endpoint: 'history',
      authenticated: true,
      auth: 'merchant-headers',
      httpStatus: 200,
    });
  });

  it('every request of one workflow run, in order: each accepted, and the history shows them', async () => {
    seed();
    for (const type of ['Business & Secret', 'Bearer Token'] as const) {
      for (const operation of OPERATIONS) {
        const answer = await send(operation, CREDENTIALS[type]);
        expect(answer.json, `${operation.name} (${type})`).not.toMatchObject({ status: 0 });
      }
    }
    const history = await send(
      { method: 'GET', path: `/v1/message/${CONVERSATION}` },
      CREDENTIALS['Merchant ID & Secret Key'],
    );
    const list = (history.json as { data: { list: { sender_name: string; message_type: string }[] } }).data
      .list;
    // Ten sends (text and four media, with each credential type) and two notes.
    expect(list).toHaveLength(12);
    expect(list.filter((message) => message.sender_name === 'api')).toHaveLength(2);
    const total = await send(OPERATIONS[7] as Operation, CREDENTIALS['Bearer Token']);
    expect(total.json).toMatchObject({ status: 1, data: { total: 1 } });
    const seen = requestsSeen(emulator());
    expect(seen).toHaveLength(2 * OPERATIONS.length + 2);
    expect(seen.filter((request) => !request.authenticated)).toEqual([]);
  });

  // The node's third credential type on its other operations sends no credentials at all: refused
  // by any reading (Authentication rule 1), as the live service must too.
  it.each(OPERATIONS)(
    'refuses $name with its "Merchant ID & Secret Key" credentials (none sent)',
    async (row) => {
      seed();
      const answer = await send(row, {});
      expect(answer).toMatchObject({
        status: 200,
        json: { status: 0, rc: 401, error_msg: INVALID_DATA_TEXT },
      });
      expect(requestsSeen(emulator())).toMatchObject([
        { authenticated: false, auth: 'no credentials', rc: 401 },
      ]);
    },
  );

  // Accepting the merchant headers is not accepting anything: every credential presented must be
  // right, as everywhere else (docs/conformance.md, finding 1).
  it.each([
    ['a wrong secret_key', { merchant_id: BUSINESS_ID, secret_key: 'sk-wrong' }, 'wrong secret_key'],
    ['a wrong merchant_id', { merchant_id: 'biz-other', secret_key: SECRET }, 'unknown merchant_id'],
    [
      'merchant_id alone',
      { merchant_id: BUSINESS_ID },
      'merchant_id and secret_key headers must be sent together',
    ],
    [
      'valid Business + Secret beside a wrong secret_key',
      { ...CREDENTIALS['Business & Secret'], merchant_id: BUSINESS_ID, secret_key: 'sk-wrong' },
      'wrong secret_key',
    ],
  ])('refuses the history call with %s', async (_what, headers, logged) => {
    seed();
    const answer = await send({ method: 'GET', path: `/v1/message/${CONVERSATION}` }, headers);
    expect(answer).toMatchObject({ status: 200, json: { status: 0, rc: 401, error_msg: INVALID_DATA_TEXT } });
    expect(requestsSeen(emulator())).toMatchObject([{ endpoint: 'history', auth: logged }]);
  });

  it('takes merchant_id + secret_key on the history call only (the interface’s remark and the evidence)', async () => {
    seed();
    const answer = await send(OPERATIONS[5] as Operation, CREDENTIALS['Merchant ID & Secret Key']);
    expect(answer.json).toEqual({ status: 0, rc: 401, error_msg: INVALID_DATA_TEXT });
    expect(emulator().admin.conversation(CONVERSATION).notes).toHaveLength(0);
  });
});
