import { describe, expect, it } from 'vitest';
import { checkWebhookHead } from '../../../src/receive/receive-webhook.js';
import { createSecretVerifier } from '../../../src/receive/verify-secret.js';

const policy = { verify: createSecretVerifier(['s3cret-abc']), bodyLimitBytes: 1024 };
const good = { authorization: 's3cret-abc', 'content-type': 'application/json', 'content-length': '100' };

describe('checkWebhookHead: the order of checks', () => {
  it('lets a POST with the secret, JSON and a small body through', () => {
    expect(checkWebhookHead({ method: 'POST', headers: good }, policy)).toBeUndefined();
  });

  it.each([
    ['GET on the path', 'GET', good, 405],
    ['PUT without any credentials', 'PUT', {}, 405],
    ['no secret (before looking at the content type)', 'POST', { 'content-type': 'text/plain' }, 401],
    [
      'a wrong secret with an oversize body (never read)',
      'POST',
      { ...good, authorization: 'x', 'content-length': '99999999' },
      401,
    ],
    ['the secret but text/plain', 'POST', { ...good, 'content-type': 'text/plain' }, 415],
    ['the secret but no content type', 'POST', { authorization: 's3cret-abc' }, 415],
    [
      'the secret, JSON, and a declared length over the limit',
      'POST',
      { ...good, 'content-length': '1025' },
      413,
    ],
  ])('%s -> %i', (_label, method, headers, status) => {
    expect(checkWebhookHead({ method, headers }, policy)?.status).toBe(status);
  });
});
