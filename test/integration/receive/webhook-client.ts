/** What a test sees of one webhook answer. */
export interface WebhookAnswer {
  status: number;
  json: unknown;
  /** `X-Convo-Bridge-Outcome`, the receiver's own name for what it did. */
  outcome: string | null;
  contentType: string | null;
  elapsedMs: number;
}

/** POSTs to a receiver on loopback with fetch and reads the answer as JSON. */
export async function postWebhook(
  url: string,
  body: string | Uint8Array | ReadableStream<Uint8Array> | undefined,
  headers: Record<string, string>,
  method = 'POST',
): Promise<WebhookAnswer> {
  const started = performance.now();
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // kept as text: the assertion on `json` then shows what came back
  }
  return {
    status: response.status,
    json,
    outcome: response.headers.get('x-convo-bridge-outcome'),
    contentType: response.headers.get('content-type'),
    elapsedMs: performance.now() - started,
  };
}
