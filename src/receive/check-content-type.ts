/**
 * Accepts `application/json` and `application/*+json` (e.g. `application/vnd.api+json`), with or
 * without `charset`, which must then be UTF-8 (RFC 8259 §8.1: JSON between systems is UTF-8).
 * Returns undefined when acceptable, else the error text for the 415 answer.
 */
export function checkContentType(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') {
    return 'the request has no Content-Type; send the body as JSON with "Content-Type: application/json"';
  }
  const [mediaType = '', ...params] = header.split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type)) {
    return `Content-Type ${JSON.stringify(type)} is not JSON; send the body with "Content-Type: application/json"`;
  }
  for (const param of params) {
    const [rawName = '', ...rest] = param.split('=');
    if (rawName.trim().toLowerCase() !== 'charset') continue;
    const charset = rest
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      return `charset ${JSON.stringify(charset)} is not supported; send the JSON body as UTF-8`;
    }
  }
  return undefined;
}
