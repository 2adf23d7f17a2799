import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { WEBHOOK_FIXTURES } from '../../fixtures/webhooks/index.js';
import { allPaths, deepJsonText, hostileValue, setAtPath } from './hostile-values.js';
import { chunked, requestBytes } from './raw-http.js';

/**
 * Whole webhook requests as bytes, each with the answers the receiver may give. The model says
 * what a correct receiver answers (docs/receiver.md, "Status codes" and "Order of checks"); where
 * the request is malformed below HTTP (a lying Content-Length, duplicate or invalid framing
 * headers) only "400 or what the well-formed part deserves" is expected.
 */

export const SECRET = 'whsec-hostile-3c9f0a7b';
export const ROTATED = 'whsec-hostile-rotated-51e2';
export const BODY_LIMIT = 64 * 1024;
export const WEBHOOK_PATH = '/webhooks/platform';

export interface WebhookRequest {
  /** What was generated, for the counterexample fast-check prints. */
  label: string;
  bytes: Buffer;
  halfClose: boolean;
  /** Statuses a correct receiver may answer (503 is always allowed: Redis may be slow). */
  allowed: number[];
  /** HEAD answers carry no body. */
  head: boolean;
}

type Headers = [string, string][];

/** Secret headers, each with whether it authenticates. Node keeps the first of repeated Authorization headers and joins repeated custom ones with ", ". */
const auth = fc.oneof(
  fc.constantFrom<[string, Headers, boolean]>(
    ['no secret', [], false],
    ['Authorization: secret', [['Authorization', SECRET]], true],
    ['Authorization: Bearer', [['Authorization', `Bearer ${SECRET}`]], true],
    ['authorization: bEaReR, tab', [['authorization', `bEaReR \t ${SECRET}`]], true],
    ['Authorization with spaces around', [['Authorization', `   ${SECRET}   `]], true],
    ['secret: rotated', [['secret', ROTATED]], true],
    [
      'wrong Authorization, right secret',
      [
        ['Authorization', 'nope'],
        ['secret', SECRET],
      ],
      true,
    ],
    [
      'Authorization twice, right first',
      [
        ['Authorization', SECRET],
        ['Authorization', 'other'],
      ],
      true,
    ],
    [
      'Authorization twice, right second',
      [
        ['Authorization', 'other'],
        ['Authorization', SECRET],
      ],
      false,
    ],
    [
      'secret twice (joined)',
      [
        ['secret', SECRET],
        ['secret', SECRET],
      ],
      false,
    ],
    ['Basic', [['Authorization', `Basic ${Buffer.from(`x:${SECRET}`).toString('base64')}`]], false],
    ['upper-cased secret', [['Authorization', SECRET.toUpperCase()]], false],
    ['secret with a suffix', [['Authorization', `${SECRET}x`]], false],
    ['secret cut short', [['Authorization', SECRET.slice(0, -1)]], false],
    ['Bearer without secret', [['Authorization', 'Bearer']], false],
    ['Bearer without space', [['Authorization', `Bearer${SECRET}`]], false],
    ['empty Authorization', [['Authorization', '']], false],
    ['latin-1 bytes', [['Authorization', `${SECRET}\u00e9\u00ff`]], false],
    ['10 KB Authorization', [['Authorization', 'a'.repeat(10_000)]], false],
  ),
  fc
    .string({ minLength: 1, maxLength: 40, unit: fc.constantFrom(...'abcXYZ019 -_.~+/=!#$%&*'.split('')) })
    .map((value): [string, Headers, boolean] => ['random Authorization', [['Authorization', value]], false]),
);

const contentType = fc.constantFrom<[string, Headers, boolean]>(
  ['json', [['Content-Type', 'application/json']], true],
  ['json utf-8', [['Content-Type', 'application/json; charset=utf-8']], true],
  ['json "UTF-8"', [['Content-Type', 'application/json;charset="UTF-8"']], true],
  ['JSON upper case', [['Content-Type', 'Application/JSON']], true],
  ['vendor +json', [['Content-Type', 'application/vnd.platform+json']], true],
  ['json, other parameter', [['Content-Type', 'application/json; boundary=x']], true],
  ['json latin1', [['Content-Type', 'application/json; charset=latin1']], false],
  ['text/plain', [['Content-Type', 'text/plain']], false],
  ['no Content-Type', [], false],
  ['empty Content-Type', [['Content-Type', '']], false],
  ['two types in one', [['Content-Type', 'application/json, text/plain']], false],
  ['jsonp', [['Content-Type', 'application/jsonp']], false],
  ['*/*', [['Content-Type', '*/*']], false],
  [
    'Content-Type twice, text first',
    [
      ['Content-Type', 'text/plain'],
      ['Content-Type', 'application/json'],
    ],
    false,
  ],
  [
    'Content-Type twice, json first',
    [
      ['Content-Type', 'application/json'],
      ['Content-Type', 'text/plain'],
    ],
    true,
  ],
);

/** Method and path, with the answer they alone decide (null: go on to the secret). */
const target = fc.oneof(
  { weight: 12, arbitrary: fc.constant<[string, string, number | null]>(['POST', WEBHOOK_PATH, null]) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<[string, string, number | null]>(
      ['POST', `${WEBHOOK_PATH}?x=1&y=%zz`, null],
      ['POST', `${WEBHOOK_PATH}/`, null],
      ['POST', '/WEBHOOKS/Platform', null],
      ['GET', WEBHOOK_PATH, 405],
      ['PUT', WEBHOOK_PATH, 405],
      ['DELETE', WEBHOOK_PATH, 405],
      ['PATCH', WEBHOOK_PATH, 405],
      ['OPTIONS', WEBHOOK_PATH, 405],
      ['HEAD', WEBHOOK_PATH, 405],
      ['POST', '/webhooks/platform/extra', 404],
      ['POST', '/webhooks%2Fplatform', 404],
      ['POST', '/', 404],
      ['POST', '/healthz', 404],
      ['POST', `/${'a'.repeat(8_000)}`, 404],
    ),
  },
);

const FIXTURE_BODIES = WEBHOOK_FIXTURES.map((f) => Buffer.from(f.raw, 'utf8'));
const FIXTURE_VALUES = WEBHOOK_FIXTURES.map((f) => JSON.parse(f.raw) as unknown);
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Bodies: real fixtures, and fixtures broken in every way a sender or a network can break them. */
const body: fc.Arbitrary<[string, Buffer]> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...FIXTURE_BODIES).map((b): [string, Buffer] => ['fixture', b]) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...FIXTURE_BODIES)
      .map((b): [string, Buffer] => ['BOM + fixture', Buffer.concat([BOM, b])]),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...FIXTURE_BODIES), fc.nat())
      .map(([b, at]): [string, Buffer] => ['truncated fixture', b.subarray(0, at % b.length)]),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...FIXTURE_BODIES),
        fc.nat(),
        fc.uint8Array({ minLength: 1, maxLength: 4, min: 0x80, max: 0xff }),
      )
      .map(([b, at, bytes]): [string, Buffer] => {
        const i = at % b.length;
        return ['invalid UTF-8 in a fixture', Buffer.concat([b.subarray(0, i), bytes, b.subarray(i)])];
      }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...FIXTURE_VALUES), fc.nat(), hostileValue)
      .map(([value, at, replacement]): [string, Buffer] => {
        const paths = allPaths(value);
        const path = paths[at % paths.length] ?? [];
        return [
          'fixture with a hostile field',
          Buffer.from(JSON.stringify(setAtPath(value, path, replacement)) ?? 'null'),
        ];
      }),
  },
  {
    weight: 1,
    arbitrary: fc
      .jsonValue({ maxDepth: 3 })
      .map((v): [string, Buffer] => ['random JSON', Buffer.from(JSON.stringify(v) ?? 'null')]),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((b): [string, Buffer] => ['random bytes', Buffer.from(b)]),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<[string, Buffer]>(
      ['empty', Buffer.alloc(0)],
      ['whitespace', Buffer.from(' \r\n\t ')],
      ['BOM only', BOM],
      [
        'UTF-16 BOM + JSON',
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"event":"test"}', 'utf16le')]),
      ],
      ['NUL bytes', Buffer.alloc(64)],
      ['deep array (30,000 levels)', Buffer.from(deepJsonText(30_000, 'a', '1').replace(/\{"a":/g, '['))],
      [
        'event with 20,000 levels under an unknown key',
        Buffer.from(
          `{"event":"conversation.assigned","conversation_id":"c-deep","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
        ),
      ],
      ['over the limit', Buffer.from(`{"event":"test","pad":"${'x'.repeat(BODY_LIMIT)}"}`)],
      [
        '__proto__ polluter',
        Buffer.from(
          '{"event":"test","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}',
        ),
      ],
    ),
  },
);

/** What the body stage answers for these (decoded) bytes: docs/receiver.md "Status codes". */
export function bodyStatus(bytes: Buffer): number {
  if (bytes.length > BODY_LIMIT) return 413;
  let text = bytes.toString('utf8');
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (text.trim() === '') return 400;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 400;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? 200 : 400;
}

type Encoding = [string, (b: Buffer) => Buffer, 'decoded' | 400 | 415];
const encoding = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Encoding>(['none', (b) => b, 'decoded']) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Encoding>(
      ['identity', (b) => b, 'decoded'],
      ['gzip', (b) => gzipSync(b), 'decoded'],
      ['deflate', (b) => deflateSync(b), 'decoded'],
      ['br', (b) => brotliCompressSync(b), 'decoded'],
      ['gzip (not gzip)', (b) => Buffer.concat([Buffer.from('not gzip'), b]), 400],
      ['compress', (b) => b, 415],
      ['gzip, gzip', (b) => gzipSync(gzipSync(b)), 415],
    ),
  },
);

type Framing =
  | 'length'
  | 'chunked'
  | 'none'
  | 'short'
  | 'long'
  | 'length twice'
  | 'two lengths'
  | 'length and chunked'
  | 'length not a number';
const framing = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom<Framing>('length', 'chunked') },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Framing>(
      'none',
      'short',
      'long',
      'length twice',
      'two lengths',
      'length and chunked',
      'length not a number',
    ),
  },
);

const headerName = fc
  .stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/)
  .filter(
    (n) =>
      !/^(content-length|transfer-encoding|connection|host|authorization|secret|content-type|content-encoding|expect|upgrade|te|trailer)$/i.test(
        n,
      ),
  );
/** Extra headers: harmless ones, and a few no HTTP parser may accept (answered 400 before any other check). */
const noise = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constant<[string, Headers, 'ok' | 'invalid' | 'expect']>(['no extra headers', [], 'ok']),
  },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.tuple(
          headerName,
          fc.string({ maxLength: 30, unit: fc.constantFrom(...' abcXYZ019;=,"\'/\\()<>@[]{}?'.split('')) }),
        ),
        {
          maxLength: 4,
        },
      )
      .map((h): [string, Headers, 'ok'] => ['extra headers', h, 'ok']),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<[string, Headers, 'ok' | 'invalid' | 'expect']>(
      ['Expect: 100-continue', [['Expect', '100-continue']], 'ok'],
      ['Expect: something else', [['Expect', 'coffee']], 'expect'],
      ['no Host', [], 'ok'],
      ['Host twice', [['Host', 'evil.example']], 'ok'],
      ['control byte in a value', [['X-Bad', 'a\u0001b']], 'invalid'],
      ['NUL in a value', [['X-Bad', 'a\u0000b']], 'invalid'],
      ['space in a name', [['X Bad', 'v']], 'invalid'],
      ['colon-less line', [['X-Bad\r\nno colon here', 'v']], 'invalid'],
      ['20 KB of headers', [['X-Big', 'b'.repeat(20_000)]], 'invalid'],
    ),
  },
);

export const webhookRequest: fc.Arbitrary<WebhookRequest> = fc
  .record({
    target,
    auth,
    contentType,
    body,
    encoding,
    framing,
    noise,
    pieceSize: fc.integer({ min: 1, max: 4096 }),
  })
  .map(
    ({
      target: [method, path, targetStatus],
      auth: a,
      contentType: ct,
      body: [bodyLabel, raw],
      encoding: e,
      framing: f,
      noise: n,
      pieceSize,
    }) => {
      const [encodingName, encode, encodingOutcome] = e;
      const sent = encode(raw);
      const headers: Headers = [];
      if (n[0] !== 'no Host') headers.push(['Host', '127.0.0.1']);
      headers.push(...a[1], ...ct[1], ...n[1]);
      if (encodingName !== 'none') headers.push(['Content-Encoding', encodingName.replace(/ \(.*\)$/, '')]);
      let payload = sent;
      let halfClose = false;
      // The body the receiver reads as the request's own (the rest, if any, is junk after it).
      let framedBody = sent;
      switch (f) {
        case 'length':
          headers.push(['Content-Length', String(sent.length)]);
          break;
        case 'chunked':
          headers.push(['Transfer-Encoding', 'chunked']);
          payload = chunked(sent, pieceSize);
          break;
        case 'none':
          framedBody = Buffer.alloc(0);
          break;
        case 'short': {
          const declared = Math.floor(sent.length / 2);
          headers.push(['Content-Length', String(declared)]);
          framedBody = sent.subarray(0, declared);
          break;
        }
        case 'long':
          headers.push(['Content-Length', String(sent.length + 1 + (pieceSize % 100))]);
          halfClose = true;
          break;
        case 'length twice':
          headers.push(['Content-Length', String(sent.length)], ['Content-Length', String(sent.length)]);
          break;
        case 'two lengths':
          headers.push(['Content-Length', String(sent.length)], ['Content-Length', String(sent.length + 1)]);
          break;
        case 'length and chunked':
          headers.push(['Content-Length', String(sent.length)], ['Transfer-Encoding', 'chunked']);
          payload = chunked(sent, pieceSize);
          break;
        case 'length not a number':
          headers.push(['Content-Length', `${sent.length}abc`]);
          break;
      }
      headers.push(['Connection', 'close']);

      // What a correct receiver answers for the well-formed part: the order of checks.
      const declaredLength = f === 'length' || f === 'short' ? framedBody.length : undefined;
      let status: number;
      if (targetStatus !== null) status = targetStatus;
      else if (!a[2]) status = 401;
      else if (!ct[2]) status = 415;
      else if (declaredLength !== undefined && declaredLength > BODY_LIMIT) status = 413;
      // Without Content-Length or Transfer-Encoding there is no body at all (HTTP/1.1 framing).
      else if (f === 'none') status = bodyStatus(Buffer.alloc(0));
      else if (encodingOutcome !== 'decoded') status = encodingOutcome;
      else if (encodingName === 'none' || encodingName === 'identity') status = bodyStatus(framedBody);
      // Compressed: the limit and the checks apply to what it decompresses to.
      else if (framedBody.length === sent.length) status = bodyStatus(raw);
      // A compressed body cut short: the decoder fails.
      else status = 400;
      // Node's parser refuses a repeated Content-Length even with equal values.
      const malformed =
        n[2] === 'invalid' ||
        ['length twice', 'two lengths', 'length and chunked', 'length not a number'].includes(f);
      const bytes = requestBytes(method, path, headers, payload);
      // Node refuses a head (request line and headers) over 16 KB with 431, before anything else.
      const headSize = bytes.indexOf('\r\n\r\n');
      let allowed: number[];
      if (headSize > 16_384 + 512) allowed = [431];
      else if (malformed) allowed = [400];
      else if (n[2] === 'expect') allowed = [417];
      else if (f === 'none' || f === 'short' || f === 'long') allowed = [status, 400];
      else allowed = [status];
      if (headSize > 16_384 - 512 && headSize <= 16_384 + 512) allowed.push(431);
      const label = [
        method,
        path.slice(0, 40),
        a[0],
        ct[0],
        bodyLabel,
        `encoding ${encodingName}`,
        `framing ${f}`,
        n[0],
      ].join(' | ');
      return {
        label,
        bytes,
        halfClose,
        allowed: [...new Set(allowed)],
        head: method === 'HEAD',
      };
    },
  );

/** fast-check prints the label and the size rather than a megabyte of bytes. */
export const printableWebhookRequest = webhookRequest.map((r) =>
  Object.assign(r, {
    [fc.toStringMethod]: () => `${r.label} (${r.bytes.length} bytes, allowed ${r.allowed.join('/')})`,
  }),
);
