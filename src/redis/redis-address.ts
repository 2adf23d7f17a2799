/** `host:port` of a Redis URL, for messages and logs (never the password). */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'an invalid Redis URL';
  }
}
