import { describe, expect, it } from 'vitest';
import { checkContentType } from '../../../src/receive/check-content-type.js';

describe('checkContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON; Charset="UTF-8"',
    'application/json;charset=utf8',
    'application/vnd.api+json',
    'application/cloudevents+json; charset=utf-8',
  ])('accepts %s', (header) => {
    expect(checkContentType(header)).toBeUndefined();
  });

  it.each([
    [
      undefined,
      'the request has no Content-Type; send the body as JSON with "Content-Type: application/json"',
    ],
    ['', 'the request has no Content-Type; send the body as JSON with "Content-Type: application/json"'],
    [
      'text/plain',
      'Content-Type "text/plain" is not JSON; send the body with "Content-Type: application/json"',
    ],
    [
      'application/x-www-form-urlencoded',
      'Content-Type "application/x-www-form-urlencoded" is not JSON; send the body with "Content-Type: application/json"',
    ],
    [
      'text/json',
      'Content-Type "text/json" is not JSON; send the body with "Content-Type: application/json"',
    ],
    [
      'application/jsonp',
      'Content-Type "application/jsonp" is not JSON; send the body with "Content-Type: application/json"',
    ],
    ['application/json; charset=latin1', 'charset "latin1" is not supported; send the JSON body as UTF-8'],
    ['application/json; charset=utf-16', 'charset "utf-16" is not supported; send the JSON body as UTF-8'],
  ])('rejects %s', (header, message) => {
    expect(checkContentType(header)).toBe(message);
  });
});
